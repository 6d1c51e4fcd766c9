// vigil-web's JSON API (docs/web-api.md) as the pages use it: one GET
// helper that turns every answer that is not 2xx into an ApiError carrying
// the API's {"error": {status, code, parameter, message}}, and the message
// box every page shows when a request fails.

export class ApiError extends Error {
  constructor(status, code, message, parameter) {
    super(message);
    this.status = status; // HTTP status, 0 when the server did not answer
    this.code = code; // the API's error code, e.g. "not_found"
    this.parameter = parameter || null;
  }
}

// The API path with its query; parameters that are null, undefined or ''
// are left out, so a page can pass its filters as they are.
export function apiUrl(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === '') continue;
    query.append(name, String(value));
  }
  const text = query.toString();
  return '/api/v1/' + path + (text ? '?' + text : '');
}

export async function apiGet(path, params = {}) {
  const url = apiUrl(path, params);
  let response;
  try {
    response = await fetch(url, { headers: { Accept: 'application/json' } });
  } catch (e) {
    // fetch rejects only when no HTTP answer came: vigil-web itself is gone.
    throw new ApiError(0, 'unreachable', `vigil-web did not answer (${e.message})`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = null; // a proxy's HTML error page, say: keep the status
  }
  if (!response.ok) {
    const error = body && body.error ? body.error : {};
    throw new ApiError(response.status, error.code || 'http_' + response.status,
      error.message || `${url} answered ${response.status} ${response.statusText}`,
      error.parameter);
  }
  if (body === null) {
    throw new ApiError(response.status, 'bad_json', `${url} did not answer JSON`);
  }
  return body;
}

// apiGet for what a page cannot go on without: the answer, or null once
// showError has said why (`what` as for errorText).
export async function apiGetOrShow(path, params, what) {
  try {
    return await apiGet(path, params);
  } catch (e) {
    showError(e, what);
    return null;
  }
}

// The sentence a person reads for an error. `what` names the thing the
// page asked for ("run 7", "node 3", "window 12") so a 404 says which one.
export function errorText(error, what) {
  if (!(error instanceof ApiError)) return String(error.message || error); // the page's own words
  switch (error.status) {
    case 503:
      return `The warehouse is unreachable: ${error.message}`;
    case 404:
      return what ? `${capitalise(what)} does not exist or is not yours.` : error.message;
    case 403:
      return `Not allowed: ${error.message}`;
    case 400:
      return `Bad request${error.parameter ? ' (' + error.parameter + ')' : ''}: ${error.message}`;
    case 0:
      return error.message;
    default:
      return `Error ${error.status}: ${error.message}`;
  }
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// Shows the message in the page's #message box (role=alert, so screen
// readers say it) and returns it. Tests look for #message[data-status].
export function showError(error, what) {
  const box = document.getElementById('message');
  const text = errorText(error, what);
  if (box) {
    box.textContent = text;
    box.dataset.status = error instanceof ApiError ? String(error.status) : 'error';
    box.hidden = false;
  }
  // the page is done, badly: tests wait for data-loaded
  document.body.dataset.loaded = 'error';
  console.error(text, error);
  return text;
}

export function clearError() {
  const box = document.getElementById('message');
  if (box) {
    box.hidden = true;
    box.textContent = '';
    delete box.dataset.status;
  }
}

// Who we are (GET /api/v1/me), written in the page's header.
export async function showMe() {
  const slot = document.getElementById('me');
  if (!slot) return null;
  try {
    const me = await apiGet('me');
    if (me.auth === 'none') slot.textContent = 'no login (everybody sees everything)';
    else slot.textContent = `${me.user ?? 'unknown user'}${me.admin ? ' (admin)' : ''}`;
    return me;
  } catch (e) {
    slot.textContent = '';
    return null;
  }
}
