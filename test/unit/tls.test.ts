// TLS failures in words: Node's error codes (in the cause chain of "fetch failed") mapped to a
// reason without OpenSSL's source locations, and to the kind of thing to check.
import { describe, expect, test } from 'vitest';
import { hostOf, tlsFailureOf } from '../../src/core/tls.js';

function fetchFailure(code: string, message: string): Error {
  const cause = Object.assign(new Error(message), { code });
  return new TypeError('fetch failed', { cause });
}

describe('tlsFailureOf', () => {
  test.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate', "the server's certificate is not signed by a CA this client trusts (DEPTH_ZERO_SELF_SIGNED_CERT)", 'trust'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain', "the server's certificate is not signed by a CA this client trusts (SELF_SIGNED_CERT_IN_CHAIN)", 'trust'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate', "the server's certificate is not signed by a CA this client trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE)", 'trust'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ", "the server's certificate is not valid for this address (Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list)", 'name'],
    ['CERT_HAS_EXPIRED', 'certificate has expired', "the server's certificate has expired", 'validity'],
    ['CERT_NOT_YET_VALID', 'certificate is not yet valid', "the server's certificate is not valid yet", 'validity'],
    [
      'ERR_SSL_WRONG_VERSION_NUMBER',
      '40FD660CAE7F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n',
      'the server did not answer in TLS (is it plain http, or another port?)',
      'protocol',
    ],
    [
      'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      '40FD:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert protocol version:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:918:SSL alert number 70\n',
      'tlsv1 alert protocol version (ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION)',
      'other',
    ],
  ])('%s', (code, message, reason, check) => {
    expect(tlsFailureOf(fetchFailure(code, message))).toEqual({ code, reason, check });
  });

  test.each([
    ['connection refused', fetchFailure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1')],
    ['a name that does not resolve', fetchFailure('ENOTFOUND', 'getaddrinfo ENOTFOUND nowhere')],
    ['no code at all', new Error('boom')],
    ['not an error', 'text'],
  ])('%s is not a TLS failure', (_, error) => {
    expect(tlsFailureOf(error)).toBeUndefined();
  });
});

test('hostOf names host and port only', () => {
  expect(hostOf('https://api.cloudscale.ch')).toBe('api.cloudscale.ch');
  expect(hostOf('http://127.0.0.1:8080/proxy')).toBe('127.0.0.1:8080');
  expect(hostOf('not a url')).toBe('not a url');
});
