// Building the page's elements, and words for times and states.

/** An element: h("button", {class: "primary", onclick}, "Send"). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export const $ = (selector, root = document) => root.querySelector(selector);

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
}

/** "3 min ago", "in 42 min": how far `iso` is from now, in words. */
export function relative(iso) {
  if (!iso) return "";
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const [n, unit] = abs < 60 ? [0, ""] : abs < 3600 ? [Math.round(abs / 60), "min"]
    : abs < 86400 ? [Math.round(abs / 3600), "h"] : [Math.round(abs / 86400), "d"];
  if (!unit) return seconds < 0 ? "just now" : "in under a minute";
  return seconds < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** How long ago `iso` was ("just now" for a moment, whichever clock is a little ahead). */
export function ago(iso) {
  if (!iso) return "";
  return Date.now() - new Date(iso).getTime() < 60000 ? "just now" : relative(iso);
}

/** Time left before `iso`, or "expired". */
export function timeLeft(iso) {
  if (!iso) return "";
  return new Date(iso).getTime() <= Date.now() ? "expired" : `expires ${relative(iso)}`;
}

/** A value as a manager reads it in a diff: strings bare, empty as an em dash. */
const MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const MOMENT_WORDS = {weekday: "short", day: "numeric", month: "short", year: "numeric",
  hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC"};

export function shown(value) {
  if (value === null || value === undefined || value === "") return "—";
  // times as the summaries write them (the store keeps UTC)
  if (typeof value === "string" && MOMENT.test(value) && !Number.isNaN(Date.parse(value))) {
    return new Date(/[Zz]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`).toLocaleString("en-GB", MOMENT_WORDS);
  }
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** A field's name as a label: "member_id" → "Member id". */
export function fieldLabel(key) {
  const words = String(key).replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const isPlain = (value) => value === null || typeof value !== "object";

/** An object's fields as labelled values (a <dl>), nested objects inside their field,
 * lists of plain values joined: arguments as a person reads them, never raw JSON. */
export function labelled(values) {
  const entries = Object.entries(values || {});
  if (!entries.length) return h("p", {class: "muted"}, "None.");
  const value = (v) => {
    if (Array.isArray(v)) return v.every(isPlain) ? v.map(shown).join(", ") || "—" : v.map(value);
    return isPlain(v) ? shown(v) : labelled(v);
  };
  return h("dl", {class: "labelled"},
    entries.flatMap(([key, v]) => [h("dt", {}, fieldLabel(key)), h("dd", {}, value(v))]));
}

/** Data as it was sent, for whoever needs it, behind a toggle (closed). */
export function rawData(label, ...parts) {
  return h("details", {class: "raw"}, h("summary", {}, label),
    parts.flatMap(([title, value]) => [h("div", {class: "tool-label"}, title),
      h("pre", {}, trimmed(typeof value === "string" ? value : JSON.stringify(value ?? null, null, 2), 2000))]));
}

/** `text` cut to `max` characters, saying so. */
export function trimmed(text, max = 600) {
  const s = typeof text === "string" ? text : JSON.stringify(text);
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;
}

const STATUS_WORDS = {
  running: "Running", completed: "Completed", completed_with_errors: "Completed with errors",
  awaiting_approval: "Waiting for approval", failed: "Failed", cancelled: "Stopped",
};

/** A thread's or run's status as a coloured pill. */
export function statusPill(status, words) {
  // the API's words say what happened (a completed run with nothing done is "Not done")
  const tone = status === "completed" && words && words !== STATUS_WORDS.completed ? "completed_with_errors" : status;
  return h("span", {class: `pill pill-${tone || "unknown"}`}, words || STATUS_WORDS[status] || status || "New");
}

/** A tool's name in words: "members_get" → "Members · get" (a tool is named after its
 * operation, the domain before the first "_"). */
export function toolLabel(name) {
  return operationLabel(String(name || "").replace("_", "."));
}

/** "members.update" → "Members · update". */
export function operationLabel(op) {
  const [domain, verb] = String(op || "").split(".");
  if (!verb) return op || "";
  return `${domain[0].toUpperCase()}${domain.slice(1)} · ${verb.replaceAll("_", " ")}`;
}

/** A short notice that goes away by itself (role=status: read by screen readers). */
export function toast(text, kind = "info") {
  const box = $("#toasts");
  const note = h("div", {class: `toast toast-${kind}`, role: "status"}, text);
  box.append(note);
  setTimeout(() => note.remove(), 6000);
}
