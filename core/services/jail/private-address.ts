import net from 'node:net';


/** Addresses a server-side fetch must never reach: loopback, private, link-local, CGNAT, multicast, reserved. */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  // ::/96 is the deprecated IPv4-compatible form, 64:ff9b:1::/48 local-use NAT64, 2001::/32 Teredo (tunnels whose
  // far end is whatever the packet names): none is a public web server.
  ['::', 96], ['64:ff9b:1::', 48], ['2001::', 32],
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) blocked.addSubnet(prefix, bits, 'ipv6');

/** The 16 bytes of a valid IPv6 address (any spelling: `::` shorthand, embedded dotted IPv4, zone id). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.flatMap((g) => {
    const n = parseInt(g || '0', 16);
    return [n >> 8, n & 255];
  });
}

const v4 = (b: number[], at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zeros = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 address carries, in every form that can lead to it: IPv4-compatible `::a.b.c.d` (::/96),
 * mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d` (::ffff:0:0/96), NAT64 `64:ff9b::/96` and 6to4
 * `2002:AABB:CCDD::`. Undefined for a plain IPv6 address. (Teredo, 2001::/32, is refused as a whole.)
 */
function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  if (b.length !== 16) return undefined;
  if (zeros(b, 0, 12)) return v4(b, 12); // ::/96, IPv4-compatible (also :: and ::1, blocked below)
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(b, 12); // ::ffff:0:0/96, mapped
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return v4(b, 12); // ::ffff:0:0:0/96, translated
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return v4(b, 12); // 64:ff9b::/96, NAT64
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b, 2); // 2002::/16, 6to4
  return undefined;
}

/**
 * True for an address a server-side fetch must not reach (loopback, private, link-local, unspecified, multicast,
 * reserved), including IPv4 addresses wrapped in IPv6 in any of its forms; the IPv4-compatible range (::/96), the
 * local-use NAT64 prefix `64:ff9b:1::/48` and Teredo (2001::/32) are refused whole.
 *
 * @example
 * isPrivateAddress('10.1.2.3'); // true
 * isPrivateAddress('::ffff:127.0.0.1'); // true
 * isPrivateAddress('::7f00:1'); // true (IPv4-compatible 127.0.0.1)
 * isPrivateAddress('142.250.74.46'); // false
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address.replace(/%.*$/, ''));
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const plain = address.replace(/%.*$/, '');
    const inner = embeddedIpv4(plain);
    if (inner && blocked.check(inner, 'ipv4')) return true;
    return blocked.check(plain, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}
