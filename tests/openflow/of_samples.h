/*
 * tests/openflow/of_samples.h: sample messages of every modelled type (see of_samples.c).
 * Variable parts point to static storage, so the samples stay valid after the call.
 */
#ifndef RINGFLOW_TESTS_OF_SAMPLES_H
#define RINGFLOW_TESTS_OF_SAMPLES_H

#include "of.h"

#define OF_SAMPLES_MAX 24

/* Fills out[0..] with up to max sample messages in `version`; returns how many. */
size_t of_samples(uint8_t version, struct of_msg *out, size_t max);

#endif
