// Small JSON-over-HTTP helpers for the benchmark scripts (Node's fetch, keep-alive by default).
export async function requestJson(method, url, body) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', 'x-user-id': 'bench' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

export const postJson = (url, body) => requestJson('POST', url, body);
