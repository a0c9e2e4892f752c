/**
 * Normalises a configured base URL so requests go to exactly one `/v1`:
 * `https://gw.example`, `https://gw.example/`, `https://gw.example/v1` and `https://gw.example/v1/` all give
 * `{ v1: 'https://gw.example/v1', root: 'https://gw.example' }`.
 *
 * @example normalizeBaseUrl('http://127.0.0.1:8080/v1/').v1 // 'http://127.0.0.1:8080/v1'
 */
export function normalizeBaseUrl(raw: string): { v1: string; root: string } {
  let url = raw.trim().replace(/\/+$/, '');
  while (/\/v1$/i.test(url)) url = url.slice(0, -3).replace(/\/+$/, '');
  return { v1: `${url}/v1`, root: url };
}
