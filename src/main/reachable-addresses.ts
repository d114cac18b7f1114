// Where a phone on the same network can reach this server: the listener's port on every
// non-loopback interface address (os.networkInterfaces), when it listens on all addresses
// (0.0.0.0 or ::), else on the one it was given. Printed by `signet serve` on the terminal —
// stderr, not the JSON log on stdout — with what to set so install links work from a phone.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';

export interface ListenerAddress {
  host: string;
  port: number;
  tls: boolean;
}

/** Base URLs other devices can use, IPv4 first; empty when the listener is loopback-only. */
export function reachableUrls(listener: ListenerAddress, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string[] {
  const scheme = listener.tls ? 'https' : 'http';
  const url = (address: string) => `${scheme}://${address.includes(':') ? `[${address}]` : address}:${listener.port}`;
  const all = listener.host === '0.0.0.0' || listener.host === '::';
  if (!all) return isLoopback(listener.host) ? [] : [url(listener.host)];
  const addresses = Object.values(interfaces).flat().filter((i): i is NetworkInterfaceInfo => i !== undefined && !i.internal);
  // 0.0.0.0 accepts IPv4 only; link-local IPv6 (fe80::/10) needs a zone a URL cannot carry.
  const v4 = addresses.filter((i) => i.family === 'IPv4').map((i) => i.address);
  const v6 = listener.host === '::' ? addresses.filter((i) => i.family === 'IPv6' && !/^fe[89ab]/i.test(i.address)).map((i) => i.address) : [];
  return [...new Set([...v4, ...v6])].map(url);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The lines `signet serve` prints once it listens. */
export function reachabilityNotice(listener: ListenerAddress, publicUrl: string, urls: readonly string[]): string {
  const lines = [`Signet is listening on port ${listener.port}.`];
  if (urls.length === 0) {
    lines.push('It accepts connections from this machine only (SIGNET_HOST); set SIGNET_HOST=0.0.0.0 to reach it from a phone.');
  } else {
    lines.push('Devices on the same network can reach it at:', ...urls.map((u) => `  ${u}`));
  }
  lines.push(`Install links and QR codes use ${publicUrl}` + (/^https?:\/\/(localhost|127\.|\[::1\])/.test(publicUrl)
    ? ', which a phone cannot open: set SIGNET_PUBLIC_URL to an address above (https for iOS installs; README "Installing from a phone").'
    : ' (SIGNET_PUBLIC_URL).'));
  return `${lines.join('\n')}\n`;
}
