/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kubernetes resource quantities ("500m", "2", "1Gi", "1.5e3"): k8s.io/apimachinery's grammar. */
#ifndef KOORD_QUANTITY_H
#define KOORD_QUANTITY_H

/*
 * @s as a number: decimal suffixes n u m "" k M G T P E, binary Ki Mi Gi Ti
 * Pi Ei, or an exponent e/E<signed integer>. Returns 0, or -EINVAL
 * (@out untouched) for anything else, a negative or non-finite value.
 */
int quantity_parse(const char *s, double *out);

#endif
