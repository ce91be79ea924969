// The approvals history (managers, admins): changes that ended — applied, rejected, sent
// back, expired, orphaned, withdrawn — newest first, with who decided and when, filtered
// by status, operation, requester and period, and searched. The server checks every filter
// and says what is wrong with one.

import {api} from "./api.js";
import {h, fill, ago, operationLabel} from "./dom.js";
import {diffTable} from "./inbox.js";

const STATUSES = [["", "Every outcome"], ["applied", "Applied"], ["rejected", "Rejected"],
  ["superseded", "Sent back for revision"], ["expired", "Expired"], ["orphaned", "Can no longer be decided"],
  ["withdrawn", "Withdrawn"], ["failed", "Failed to apply"]];
const TONES = {applied: "completed", failed: "failed", rejected: "failed", superseded: "awaiting_approval"};

function field(id, label, control) {
  control.id = id;
  return h("div", {class: "field"}, h("label", {for: id}, label), control);
}

function outcome(c) {
  const when = c.finished_at ? ago(c.finished_at) : "";
  if (c.decided_by) return [`${c.status_label} by `, h("strong", {}, c.decided_by.name), when ? ` · ${when}` : ""];
  if (c.status === "withdrawn" && c.withdrawn_reason) return [`${c.status_label}: ${c.withdrawn_reason}`, when ? ` · ${when}` : ""];
  return [c.status_label, when ? ` · ${when}` : ""];
}

function row(c) {
  const who = c.requested_by ? c.requested_by.name : "someone";
  return h("article", {class: `card history-card history-${c.status}`, "aria-label": c.summary},
    h("header", {class: "card-head"}, h("span", {class: "op"}, operationLabel(c.operation)),
      h("span", {class: `pill pill-${TONES[c.status] || "cancelled"}`}, c.status_label)),
    h("h3", {class: "summary"}, c.summary),
    h("p", {class: "meta"}, ...outcome(c)),
    h("p", {class: "meta"}, "Asked by ", h("strong", {}, who), c.created_at ? ` · ${ago(c.created_at)}` : ""),
    c.feedback ? h("blockquote", {class: "request"}, `Feedback: ${c.feedback}`) : null,
    c.error && c.error.message ? h("p", {class: "note note-error"}, c.error.message) : null,
    diffTable(c));
}

export class HistoryView {
  constructor(root, app) {
    this.app = app;
    this.next = null;
    this.status = h("select", {}, STATUSES.map(([v, words]) => h("option", {value: v}, words)));
    this.operation = h("input", {placeholder: "e.g. invoices.refund", autocomplete: "off"});
    this.requester = h("input", {placeholder: "a name", autocomplete: "off"});
    this.since = h("input", {type: "date"});
    this.until = h("input", {type: "date"});
    this.q = h("input", {type: "search", placeholder: "words in the summary, request or feedback"});
    this.error = h("p", {class: "form-error", role: "alert"});
    this.state = h("p", {class: "muted", role: "status"});
    this.list = h("div", {class: "cards"});
    this.more = h("button", {type: "button", hidden: true, onclick: () => this.load(false)}, "Show more");
    const form = h("form", {class: "filters", role: "search", "aria-label": "Filter the history",
      onsubmit: (e) => { e.preventDefault(); this.load(true); }},
    field("h-status", "Outcome", this.status), field("h-operation", "Operation", this.operation),
    field("h-requester", "Asked by", this.requester), field("h-since", "From", this.since),
    field("h-until", "To", this.until), field("h-q", "Search", this.q),
    h("div", {class: "form-actions"}, h("button", {type: "submit", class: "primary"}, "Apply filters"),
      h("button", {type: "button", onclick: () => { form.reset(); this.load(true); }}, "Clear")));
    fill(root, h("div", {class: "view history"},
      h("header", {class: "view-head"}, h("h2", {}, "History")),
      h("p", {class: "muted"}, "Changes that were decided or ended on their own, newest first."),
      form, this.error, this.state, this.list, this.more));
  }

  show() { this.load(true); }

  hide() {}

  query() {
    const params = new URLSearchParams();
    for (const [name, input] of Object.entries({status: this.status, operation: this.operation,
      requester: this.requester, since: this.since, until: this.until, q: this.q})) {
      if (input.value.trim()) params.set(name, input.value.trim());
    }
    if (this.next) params.set("cursor", this.next);
    return params;
  }

  async load(fresh) {
    if (fresh) this.next = null;
    this.error.textContent = "";
    let page;
    try {
      page = await api(`/v1/approvals/history?${this.query()}`);
    } catch (error) {
      this.error.textContent = error.status === 403 ? "Only managers and admins see the history." : error.message;
      return;
    }
    if (fresh) fill(this.list);
    this.list.append(...page.changes.map(row));
    this.next = page.next;
    this.more.hidden = !page.next;
    const shown = this.list.childElementCount;
    this.state.textContent = shown ? `${shown} change${shown === 1 ? "" : "s"} shown${page.next ? " (more below)" : ""}.` : "No changes match these filters.";
  }
}
