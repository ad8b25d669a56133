/** Kubernetes name rules the constructs validate props with. */

/** An RFC 1123 label (namespace names, object names that must be labels); the 63-character limit is checked apart. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The longest DNS label. */
export const DNS_LABEL_MAX = 63;
