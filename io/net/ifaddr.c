/*
 * io/net/ifaddr.c: an interface's MAC and first IPv4 address, for the raw drivers' defaults
 * (their address is ip= in the config, else the interface's own), and its MTU and link
 * state (asked through a socket the driver keeps, so the answer is about the network
 * namespace the device was opened in, whichever thread asks).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/net/net.h"

int rf_net_if_lookup(const char *ifname, uint8_t mac[6], uint32_t *ip)
{
	struct ifreq ifr;
	struct ifaddrs *ifa, *i;
	int s = socket(AF_INET, SOCK_DGRAM, 0), rc;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = ioctl(s, SIOCGIFHWADDR, &ifr) == 0 ? 0 : -errno;
	close(s);
	if (rc != 0)
		return rc;
	if (mac)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!ip || *ip != 0 || getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, ifname) == 0) {
			*ip = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
			break;
		}
	freeifaddrs(ifa);
	return 0;
}

static int if_ioctl(int fd, const char *ifname, unsigned long req, struct ifreq *ifr)
{
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	return ioctl(fd, req, ifr) == 0 ? 0 : -errno;
}

int rf_net_if_mtu(int fd, const char *ifname)
{
	struct ifreq ifr;
	int rc = if_ioctl(fd, ifname, SIOCGIFMTU, &ifr);
	return rc ? rc : ifr.ifr_mtu;
}

int rf_net_if_running(int fd, const char *ifname)
{
	struct ifreq ifr;
	int rc = if_ioctl(fd, ifname, SIOCGIFFLAGS, &ifr);
	return rc ? rc : (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}
