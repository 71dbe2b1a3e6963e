// The inspector's JSON API. The session cookie carries the token; actions are JSON POSTs.

async function answer(response) {
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: text };
  }
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body;
}

export const runPath = (id) => `/api/runs/${encodeURIComponent(id)}`;

export async function getJson(path) {
  return answer(await fetch(path, { credentials: 'same-origin' }));
}

export async function act(id, action, body) {
  return answer(
    await fetch(`${runPath(id)}/${action}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}
