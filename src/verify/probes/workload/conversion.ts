/** The `conversion` round trip: the v1beta1 probe Sandbox read back at v1alpha1, through the conversion webhook. */
import type { Result } from '../../../adapter/types.js';
import type { Facts } from '../common.js';

/** Evidence for `conversion` from a v1alpha1 read of a v1beta1 object: TLS failures contradict a configured webhook (case conversion-cabundle-drift). */
export function conversionReadEvidence(conv: Facts, subject: string, r: Result<unknown>): void {
  if (r.kind === 'ok' && r.value)
    conv.proven(
      'verified',
      subject,
      'ConversionRoundTrip',
      'a v1alpha1 GET of the v1beta1 probe Sandbox succeeded (conversion round trip)',
    );
  else if (r.kind === 'ok')
    conv.add('verified', 'unknown', subject, 'ConversionObjectNotFound', 'v1alpha1 GET found no object');
  else {
    const text = r.kind === 'failed' ? r.error.message : r.message;
    const extra = r.kind === 'failed' ? { cause: r.error.category } : {};
    if (r.kind === 'failed' && r.error.tls)
      conv.add(
        'verified',
        'contradicted',
        subject,
        'ConversionTlsFailure',
        `conversion webhook TLS failure although the CRDs carry a caBundle (CA/serving certificate mismatch): ${text}`,
        extra,
      );
    else conv.add('verified', 'unknown', subject, 'ConversionReadFailed', `v1alpha1 GET failed: ${text}`, extra);
  }
}
