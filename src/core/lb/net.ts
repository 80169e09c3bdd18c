// Small pure checks on addresses and identifiers shared by the load-balancer modules.
import { isIP } from 'node:net';

/** `a.b.c.d/n` or `x::y/n` with a prefix length that fits the family. */
export function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash === -1) return false;
  const family = isIP(value.slice(0, slash));
  const prefix = value.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

export function isIpAddress(value: string): boolean {
  return isIP(value) !== 0;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** A UUID in any case, with or without hyphens. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

/** RFC 1123 subdomain as Kubernetes validates `status.loadBalancer.ingress[].hostname`. */
export function isDnsSubdomain(value: string): boolean {
  return value.length <= DNS_SUBDOMAIN_MAX_LENGTH && DNS_SUBDOMAIN.test(value);
}
