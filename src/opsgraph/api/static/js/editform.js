// An edit form generated from an operation's input schema (`GET /v1/operations/{op}`):
// one field per argument, filled with the change's arguments, checked as the API checks
// (required, lengths, patterns, bounds, choices) before it is sent; the API's own 422
// errors are shown beside the field they name.

import {h} from "./dom.js";

function resolve(schema, root) {
  if (schema && schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return resolve((root.$defs || root.definitions || {})[name] || {}, root);
  }
  return schema || {};
}

/** The schema without its `null` alternative, and whether null was allowed. */
function nonNull(schema, root) {
  const s = resolve(schema, root);
  const options = s.anyOf || s.oneOf;
  if (!options) return [s, s.type === "null"];
  const real = options.filter((o) => resolve(o, root).type !== "null");
  const merged = real.length === 1 ? {...resolve(real[0], root), title: s.title, description: s.description} : s;
  return [merged, real.length < options.length];
}

const at = (obj, path) => path.reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

class Field {
  constructor(path, schema, required, value, root) {
    const [s, nullable] = nonNull(schema, root);
    Object.assign(this, {path, schema: s, required: required && !nullable});
    const id = `edit-${path.join("-")}-${Math.random().toString(36).slice(2, 7)}`;
    const label = s.title || path[path.length - 1];
    this.error = h("span", {class: "field-error", id: `${id}-error`, "aria-live": "polite"});
    const hint = s.description ? h("span", {class: "field-hint", id: `${id}-hint`}, s.description) : null;
    this.input = this.control(id, s, value);
    this.input.setAttribute("aria-describedby", [hint && `${id}-hint`, `${id}-error`].filter(Boolean).join(" "));
    this.input.dataset.path = path.join(".");
    this.el = h("div", {class: "field", dataset: {path: path.join(".")}},
      h("label", {for: id}, label, this.required ? h("span", {class: "required", "aria-hidden": "true"}, " *") : null),
      this.input, hint, this.error);
  }

  control(id, s, value) {
    const common = {id, name: this.path.join(".")};
    if (s.enum) {
      return h("select", common, this.required ? null : h("option", {value: ""}, "— unchanged —"),
        s.enum.map((v) => h("option", {value: v, selected: v === value}, String(v).replaceAll("_", " "))));
    }
    if (s.type === "boolean") return h("input", {...common, type: "checkbox", checked: !!value});
    if (s.type === "integer" || s.type === "number") {
      return h("input", {...common, type: "number", inputmode: "decimal",
        step: s.type === "integer" ? "1" : (s.multipleOf || "any"), value: value ?? ""});
    }
    if (s.type === "string" || !s.type) {
      const long = (s.maxLength || 0) > 300;
      return long ? h("textarea", {...common, rows: "3"}, value ?? "")
        : h("input", {...common, type: s.format === "email" ? "email" : "text", value: value ?? "",
          placeholder: s.format === "date-time" ? "2030-01-07T18:00:00" : s.format === "date" ? "YYYY-MM-DD" : null});
    }
    // arrays and free-form objects: edited as JSON
    return h("textarea", {...common, rows: "4", class: "json"}, value === undefined ? "" : JSON.stringify(value, null, 2));
  }

  /** [value, error]: the typed value (undefined: left empty) or what is wrong with it. */
  read() {
    const s = this.schema;
    const raw = this.input.type === "checkbox" ? this.input.checked : this.input.value;
    if (raw === "" || raw === undefined) {
      return [undefined, this.required ? "This field is required." : null];
    }
    if (typeof raw === "boolean") return [raw, null];
    if (s.type === "integer" || s.type === "number") {
      const n = Number(raw);
      if (!Number.isFinite(n) || (s.type === "integer" && !Number.isInteger(n))) return [raw, `Enter a ${s.type === "integer" ? "whole " : ""}number.`];
      if (s.minimum !== undefined && n < s.minimum) return [n, `Must be at least ${s.minimum}.`];
      if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) return [n, `Must be more than ${s.exclusiveMinimum}.`];
      if (s.maximum !== undefined && n > s.maximum) return [n, `Must be at most ${s.maximum}.`];
      if (s.exclusiveMaximum !== undefined && n >= s.exclusiveMaximum) return [n, `Must be less than ${s.exclusiveMaximum}.`];
      return [n, null];
    }
    if (this.input.classList.contains("json")) {
      try { return [JSON.parse(raw), null]; } catch { return [raw, "Enter valid JSON."]; }
    }
    const text = s.enum ? raw : raw.trim();
    if (s.minLength !== undefined && text.length < s.minLength) return [text, `Use at least ${s.minLength} characters.`];
    if (s.maxLength !== undefined && text.length > s.maxLength) return [text, `Use at most ${s.maxLength} characters.`];
    if (s.pattern && !new RegExp(s.pattern, "u").test(text)) return [text, "This value is not in the expected form."];
    if (s.format === "date-time" && Number.isNaN(Date.parse(text))) return [text, "Enter a date and time, e.g. 2030-01-07T18:00:00."];
    if (s.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(text)) return [text, "Enter a date as YYYY-MM-DD."];
    return [text, null];
  }

  showError(message) {
    this.error.textContent = message || "";
    if (message) this.input.setAttribute("aria-invalid", "true");
    else this.input.removeAttribute("aria-invalid");
  }
}

/** The form for one change. `onSubmit(values)` gets the top-level arguments that changed. */
export class EditForm {
  constructor(card, inputSchema, {onSubmit, onCancel}) {
    this.card = card;
    this.fields = [];
    this.groups = [];  // [key, [fields]] for nested objects
    const root = inputSchema;
    const required = new Set(root.required || []);
    const body = [];
    for (const [key, prop] of Object.entries(root.properties || {})) {
      const [s] = nonNull(prop, root);
      if (s.type === "object" && s.properties) {
        const inner = new Set(s.required || []);
        const fields = Object.entries(s.properties).map(([k, p]) =>
          new Field([key, k], p, inner.has(k), at(card.args, [key, k]), root));
        this.groups.push([key, fields]);
        this.fields.push(...fields);
        body.push(h("fieldset", {class: "field-group"}, h("legend", {}, s.title || prop.title || key), fields.map((f) => f.el)));
      } else {
        const field = new Field([key], prop, required.has(key), at(card.args, [key]), root);
        this.fields.push(field);
        body.push(field.el);
      }
    }
    this.general = h("div", {class: "form-error", role: "alert"});
    this.submit = h("button", {type: "submit", class: "primary"}, "Apply changes");
    this.el = h("form", {class: "edit-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.send(onSubmit); }},
      h("p", {class: "muted"}, "Change what needs changing; the change is applied with these values."),
      body, this.general,
      h("div", {class: "form-actions"}, this.submit, h("button", {type: "button", onclick: onCancel}, "Cancel")));
  }

  /** The arguments that differ from the change's, or null when a field is invalid. */
  values() {
    const out = {};
    let ok = true;
    const read = new Map();
    for (const f of this.fields) {
      const [value, error] = f.read();
      f.showError(error);
      if (error) ok = false;
      read.set(f, value);
    }
    if (!ok) return null;
    const grouped = new Set(this.groups.flatMap(([, fields]) => fields));
    for (const f of this.fields) {
      if (grouped.has(f)) continue;
      const value = read.get(f);
      if (value !== undefined && !same(value, this.card.args[f.path[0]])) out[f.path[0]] = value;
    }
    for (const [key, fields] of this.groups) {
      const obj = {};
      for (const f of fields) if (read.get(f) !== undefined) obj[f.path[1]] = read.get(f);
      if (!same(obj, this.card.args[key] || {})) out[key] = obj;
    }
    return out;
  }

  async send(onSubmit) {
    this.general.textContent = "";
    const values = this.values();
    if (values === null) { this.el.querySelector("[aria-invalid=true]")?.focus(); return; }
    if (!Object.keys(values).length) { this.general.textContent = "Nothing was changed: edit a value, or use Approve."; return; }
    this.submit.disabled = true;
    try { await onSubmit(values); } finally { this.submit.disabled = false; }
  }

  /** The API's 422 errors beside their fields; the rest above the buttons. */
  showErrors(error) {
    const rest = [];
    for (let {field, message} of error.fields || []) {
      // a check across fields names its field in the message: "end: must be after start"
      const named = /^([\w.]+): (.*)$/s.exec(message || "");
      if ((!field || field === "body") && named && this.fields.some((f) => f.path.join(".") === named[1])) {
        [field, message] = [named[1], named[2]];
      }
      const path = String(field || "").replace(/^(values|args|body)\./, "");
      const target = this.fields.find((f) => f.path.join(".") === path)
        || this.fields.find((f) => path.startsWith(`${f.path.join(".")}.`) || f.path.join(".").startsWith(`${path}.`));
      if (target) target.showError(message);
      else rest.push(field && field !== "body" ? `${field}: ${message}` : message);
    }
    if (!(error.fields || []).length) rest.push(error.message);
    this.general.textContent = rest.join(" ");
    this.el.querySelector("[aria-invalid=true]")?.focus();
  }
}
