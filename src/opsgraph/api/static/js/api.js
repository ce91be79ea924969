// Talking to the opsgraph API: the bearer token, JSON calls with kind errors, and
// server-sent events read from fetch (an EventSource cannot send the bearer token).

const TOKEN_KEY = "opsgraph.token";
const VISITOR_SESSION_KEY = "opsgraph.visitor-session";

export function token() { return localStorage.getItem(TOKEN_KEY) || ""; }
export function setToken(value) {
  if (value) localStorage.setItem(TOKEN_KEY, value.trim());
  else localStorage.removeItem(TOKEN_KEY);
}

/** Who the token says the caller is: {tenant, user, roles, exp}, or null for a visitor.
 * Read only to shape the page; the server checks the signature on every call. */
export function whoami() {
  const t = token();
  if (!t) return null;
  try {
    const part = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, "=")));
    return {tenant: claims.tenant, user: claims.user, roles: claims.roles || [], exp: claims.exp};
  } catch {
    return {tenant: "?", user: "?", roles: [], exp: 0};
  }
}

export const isManager = (me) => !!me && me.roles.some((r) => r === "manager" || r === "admin");
export const isAdmin = (me) => !!me && me.roles.includes("admin");

/** An API error as the page shows it: status, code, message and per-field errors. */
export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `the server answered ${status}`);
    this.status = status;
    this.code = error.code || "http_error";
    this.requestId = error.request_id;
    this.fields = error.errors || (error.detail && error.detail.errors) || [];
    this.detail = error.detail || {};
  }
}

/** A visitor's own secret for this tab: the server keeps a visitor's conversations to the
 * session that started them (without it, no visitor could continue one). */
function visitorSession() {
  let id = sessionStorage.getItem(VISITOR_SESSION_KEY);
  if (!id) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    sessionStorage.setItem(VISITOR_SESSION_KEY, id);
  }
  return id;
}

function headers(extra = {}) {
  const h = {"content-type": "application/json", ...extra};
  if (token()) h.authorization = `Bearer ${token()}`;
  else h["x-opsgraph-visitor"] = visitorSession();
  return h;
}

async function failure(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON: the status says enough */ }
  const error = new ApiError(res.status, body);
  if (res.status === 401 && token()) {  // expired or revoked: the page asks to sign in again
    window.dispatchEvent(new CustomEvent("opsgraph:unauthorized", {detail: error.message}));
  }
  return error;
}

/** A JSON call; throws ApiError for an error status, or when the server cannot be reached. */
export async function api(path, {method = "GET", body, accept = "application/json"} = {}) {
  let res;
  try {
    res = await fetch(path, {method, headers: headers({accept}),
      body: body === undefined ? undefined : JSON.stringify(body)});
  } catch {
    throw new ApiError(0, {error: {code: "offline", message: "The server cannot be reached. Check your connection and try again."}});
  }
  if (!res.ok) throw await failure(res);
  if ((res.headers.get("content-type") || "").startsWith("text/event-stream")) {
    await readEvents(res, () => {});  // an older server streams the resumed run: let it finish
    return {};
  }
  return res.status === 204 ? {} : res.json();
}

/** Read a text/event-stream response to its end, calling onEvent({id, event, data}). */
export async function readEvents(res, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let fields = {data: []};
  const dispatch = () => {
    if (fields.data.length && fields.event !== undefined) {
      let data;
      try { data = JSON.parse(fields.data.join("\n")); } catch { data = {text: fields.data.join("\n")}; }
      onEvent({id: fields.id, event: fields.event, data});
    }
    fields = {data: []};
  };
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
      if (line === "") { dispatch(); continue; }
      if (line.startsWith(":")) continue;  // a keep-alive comment
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (name === "data") fields.data.push(text);
      else if (name === "event" || name === "id") fields[name] = text;
    }
  }
  dispatch();
}

/** POST `body` and read the SSE answer to its end; throws ApiError for an error status. */
export async function postStream(path, body, onEvent) {
  let res;
  try {
    res = await fetch(path, {method: "POST", headers: headers({accept: "text/event-stream"}),
      body: JSON.stringify(body)});
  } catch {
    throw new ApiError(0, {error: {code: "offline", message: "The server cannot be reached. Check your connection and try again."}});
  }
  if (!res.ok) throw await failure(res);
  await readEvents(res, onEvent);
}

/**
 * Follows a thread's stored events (`GET /v1/threads/{id}/events`) as EventSource would:
 * each connection sends `Last-Event-ID` (the last event it handed on), and a dropped or
 * ended connection is opened again after a pause, until `stop()` or until `wantsMore()`
 * says the thread has nothing more to come. Events are handed on in order, each once.
 * When the browser goes offline the connection is dropped at once (a half-open stream
 * would wait silently); back online, it reconnects without waiting for the pause.
 */
export class ThreadFollower {
  constructor(threadId, {lastId = 0, onEvent, wantsMore, onState = () => {}, retryMs = 1500}) {
    Object.assign(this, {threadId, lastId, onEvent, wantsMore, onState, retryMs});
    this.stopped = false;
    this.controller = null;
    this.wake = () => {};
    this.onOffline = () => { if (this.controller) this.controller.abort(); };
    this.onOnline = () => this.wake();
  }

  start() {
    window.addEventListener("offline", this.onOffline);
    window.addEventListener("online", this.onOnline);
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("offline", this.onOffline);
    window.removeEventListener("online", this.onOnline);
    if (this.controller) this.controller.abort();
    this.wake();
  }

  pause() {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.retryMs);
      this.wake = () => { clearTimeout(timer); resolve(); };
    });
  }

  async loop() {
    while (!this.stopped) {
      this.controller = new AbortController();
      try {
        const extra = this.lastId ? {"last-event-id": String(this.lastId)} : {};
        const res = await fetch(`/v1/threads/${encodeURIComponent(this.threadId)}/events`, {
          headers: headers({accept: "text/event-stream", ...extra}), signal: this.controller.signal,
          cache: "no-store"});
        if (!res.ok) {
          const error = await failure(res);
          if (res.status < 500 && res.status !== 429) { this.onState("closed", error); return; }
          throw error;
        }
        this.onState("live");
        await readEvents(res, (ev) => {
          const seq = Number(ev.id);
          if (Number.isFinite(seq) && seq <= this.lastId) return;  // already handed on
          if (Number.isFinite(seq)) this.lastId = seq;
          this.onEvent(ev);
        });
      } catch (error) {
        if (this.stopped) return;
        this.onState("reconnecting", error);
      }
      if (this.stopped || !this.wantsMore()) break;
      await this.pause();
    }
    window.removeEventListener("offline", this.onOffline);
    window.removeEventListener("online", this.onOnline);
    if (!this.stopped) this.onState("closed");
  }
}
