// TLS failures in words. Node reports a failed handshake as "fetch failed" with an error code
// and, for OpenSSL errors, OpenSSL's own text ("0A00010B:SSL routines:…:wrong version
// number:../deps/openssl/…"). Both the Kubernetes connection and the cloudscale client turn such
// a failure into "TLS handshake with HOST failed: <reason>" with what to check.

export interface TlsFailure {
  /** Node's error code, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  readonly code: string;
  /** What went wrong, in words, without OpenSSL's source locations. */
  readonly reason: string;
  /** What to look at first, for the kind of failure. */
  readonly check: 'trust' | 'name' | 'validity' | 'protocol' | 'other';
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
]);
const OUT_OF_DATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** The TLS failure somewhere in `error`'s cause chain, or undefined when it is not one. */
export function tlsFailureOf(error: unknown): TlsFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (UNTRUSTED.has(code)) {
        return { code, reason: `the server's certificate is not signed by a CA this client trusts (${code})`, check: 'trust' };
      }
      if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
        return { code, reason: `the server's certificate is not valid for this address (${firstSentence(current.message)})`, check: 'name' };
      }
      if (OUT_OF_DATE.has(code)) {
        return { code, reason: `the server's certificate ${code === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet'}`, check: 'validity' };
      }
      if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
        return { code, reason: 'the server did not answer in TLS (is it plain http, or another port?)', check: 'protocol' };
      }
      if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
        return { code, reason: `${openSslReason(current.message)} (${code})`, check: 'other' };
      }
    }
    current = current.cause;
  }
  return undefined;
}

/** `HOST` of a URL for messages (host and port, no credentials). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** OpenSSL's "…:SSL routines:function:reason:file:line:" → "reason". */
function openSslReason(message: string): string {
  const match = /SSL routines:[^:]*:([^:]+)/.exec(message);
  return match?.[1]?.trim() ?? firstSentence(message);
}

function firstSentence(message: string): string {
  return message.split('\n', 1)[0]!.replace(/[:;,.\s]+$/, '').slice(0, 200);
}
