// The approvals inbox (managers, admins): pending changes newest first, each with the
// request that produced it, who asked, the time left and old → new field by field; the
// manager approves, edits (a form from the operation's schema), asks for a revision or
// rejects. A decision that lost a race says who decided first.

import {api} from "./api.js";
import {h, fill, ago, timeLeft, shown, operationLabel, toast} from "./dom.js";
import {EditForm} from "./editform.js";

const POLL_MS = 5000;
const DONE_WORDS = {approve: "Approved", edit: "Edited and approved", revise: "Sent back for revision", reject: "Rejected"};

/** {path: value} for nested objects: {changes: {phone: 1}} → {"changes.phone": 1}. */
function flatten(value, prefix = "", out = {}) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = value;
  }
  return out;
}

export function diffTable(oldValue, newValue) {
  const before = flatten(oldValue || {});
  const after = flatten(newValue || {});
  // ids are for the machine: the names beside them are what a manager reads
  const keys = [...new Set([...Object.keys(after), ...Object.keys(before)])].filter((k) => !/(^|_)id$/.test(k));
  if (!keys.length) return h("p", {class: "muted"}, "No field-level details for this change.");
  return h("table", {class: "diff"},
    h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Field"), h("th", {scope: "col"}, "Now"), h("th", {scope: "col"}, "After"))),
    h("tbody", {}, keys.map((k) => {
      const changed = JSON.stringify(before[k]) !== JSON.stringify(after[k]);
      return h("tr", {class: changed ? "changed" : "same"},
        h("th", {scope: "row"}, k.replaceAll("_", " ")),
        h("td", {class: "old"}, changed && k in before ? h("del", {}, shown(before[k])) : shown(before[k])),
        h("td", {class: "new"}, changed ? h("ins", {}, shown(after[k])) : shown(after[k])));
    })));
}

class ChangeCard {
  constructor(card, inbox) {
    this.card = card;
    this.inbox = inbox;
    this.panel = h("div", {class: "card-panel"});
    this.error = h("div", {class: "card-error", role: "alert"});
    this.expiry = h("span", {class: "expiry"});
    const who = card.requested_by ? (card.requested_by.name || card.requested_by.user_id) : "someone";
    this.buttons = h("div", {class: "actions"},
      h("button", {type: "button", class: "primary", onclick: () => this.decide("approve")}, "Approve"),
      h("button", {type: "button", onclick: () => this.openEdit()}, "Edit"),
      h("button", {type: "button", onclick: () => this.openFeedback("revise")}, "Revise"),
      h("button", {type: "button", class: "danger", onclick: () => this.openFeedback("reject")}, "Reject"));
    this.el = h("article", {class: "card", dataset: {changeId: card.change_id}, "aria-label": card.summary},
      h("header", {class: "card-head"}, h("span", {class: "op"}, operationLabel(card.operation)), this.expiry),
      h("h3", {class: "summary"}, card.summary),
      h("p", {class: "meta"}, "Asked by ", h("strong", {}, who), card.created_at ? ` · ${ago(card.created_at)}` : ""),
      card.request ? h("blockquote", {class: "request"}, card.request) : null,
      diffTable(card.old, card.new), this.buttons, this.panel, this.error);
    this.tick();
  }

  get busy() { return this.panel.childElementCount > 0 || this.el.classList.contains("settled"); }

  tick() {
    const left = timeLeft(this.card.expires_at);
    this.expiry.textContent = left;
    this.expiry.classList.toggle("soon", !!this.card.expires_at && new Date(this.card.expires_at) - Date.now() < 10 * 60000);
  }

  closePanel() { fill(this.panel); this.buttons.hidden = false; }

  openFeedback(decision) {
    const revise = decision === "revise";
    const id = `fb-${this.card.change_id}`;
    const text = h("textarea", {id, rows: "2", required: revise,
      placeholder: revise ? "e.g. Make it 7pm instead" : "Optional: tell the requester why"});
    const form = h("form", {class: "feedback", novalidate: true, onsubmit: async (e) => {
      e.preventDefault();
      if (revise && !text.value.trim()) { this.error.textContent = "Say what should change, so the assistant can revise it."; text.focus(); return; }
      await this.decide(decision, {feedback: text.value.trim() || undefined});
    }},
    h("label", {for: id}, revise ? "What should change?" : "Reason for the requester"), text,
    h("div", {class: "form-actions"},
      h("button", {type: "submit", class: revise ? "primary" : "danger"}, revise ? "Ask for changes" : "Confirm"),
      h("button", {type: "button", onclick: () => this.closePanel()}, "Cancel")));
    this.buttons.hidden = true;
    fill(this.panel, form);
    text.focus();
  }

  async openEdit() {
    this.error.textContent = "";
    let op;
    try {
      op = await api(`/v1/operations/${encodeURIComponent(this.card.operation)}`);
    } catch (error) {
      this.error.textContent = `The edit form cannot be built: ${error.message}`;
      return;
    }
    this.form = new EditForm(this.card, op.input_schema || {}, {
      onSubmit: (values) => this.decide("edit", {values}),
      onCancel: () => this.closePanel()});
    this.buttons.hidden = true;
    fill(this.panel, this.form.el);
    this.form.el.querySelector("input, select, textarea")?.focus();
  }

  async decide(decision, extra = {}) {
    this.error.textContent = "";
    for (const b of this.el.querySelectorAll("button")) b.disabled = true;
    try {
      const done = await api(`/v1/approvals/${encodeURIComponent(this.card.change_id)}`, {method: "POST", body: {decision, ...extra}});
      // the change's new status in the API's words: an approval that failed to apply says so
      const words = done.status === "failed" ? done.status_label : DONE_WORDS[decision];
      const kind = done.status === "failed" ? "error" : ["approve", "edit"].includes(decision) ? "ok" : "info";
      this.settle(words, kind === "error" ? "lost" : kind);
      toast(`${words}: ${this.card.summary}`, kind);
      this.inbox.changed();
    } catch (error) {
      for (const b of this.el.querySelectorAll("button")) b.disabled = false;
      if (error.status === 422 && this.form && decision === "edit") { this.form.showErrors(error); return; }
      if (error.status === 409 || error.status === 410) {
        const first = /already decided by (.*)$/s.exec(error.message);  // the change id is noise here
        this.settle(first ? `Already decided by ${first[1]}` : error.message, "lost");
        this.inbox.changed();
        return;
      }
      this.error.textContent = error.message;
    }
  }

  /** The card is decided (by us or by someone else): it says so, then leaves the list. */
  settle(words, kind) {
    this.el.classList.add("settled", `settled-${kind}`);
    this.buttons.hidden = true;
    fill(this.panel, h("p", {class: `settled-note settled-note-${kind}`, role: "status"}, words));
    setTimeout(() => this.inbox.drop(this), kind === "ok" ? 2500 : 8000);
  }
}

export class InboxView {
  constructor(root, app) {
    this.app = app;
    this.cards = new Map();
    this.list = h("div", {class: "cards"});
    this.state = h("p", {class: "muted inbox-state", role: "status"});
    fill(root, h("div", {class: "inbox"},
      h("header", {class: "view-head"}, h("h2", {}, "Approvals"),
        h("button", {type: "button", class: "small", onclick: () => this.refresh()}, "Refresh")),
      h("p", {class: "muted"}, "Changes the assistant proposed. Nothing happens until you decide."),
      this.state, this.list));
  }

  show() {
    this.refresh();
    clearInterval(this.timer);
    this.timer = setInterval(() => { if (!document.hidden) this.refresh(); }, POLL_MS);
  }

  hide() { clearInterval(this.timer); }

  changed() { this.app.refreshBadge(); }

  drop(card) {
    card.el.remove();
    this.cards.delete(card.card.change_id);
    this.emptyCheck();
  }

  emptyCheck() {
    const open = [...this.list.children].some((el) => !el.classList.contains("settled"));
    this.state.textContent = open ? "" : "All caught up: nothing waits for a decision.";
    this.state.classList.toggle("empty-state", !open);
  }

  async refresh() {
    let changes;
    try {
      ({changes} = await api("/v1/approvals?status=pending"));
    } catch (error) {
      this.state.textContent = error.status === 403 ? "Only managers and admins decide changes." : `Approvals cannot be loaded: ${error.message}`;
      return;
    }
    changes.sort((a, b) => String(b.created_at || "").localeCompare(String(a.created_at || "")));
    const ids = new Set(changes.map((c) => c.change_id));
    for (const [id, card] of this.cards) {
      if (!ids.has(id) && !card.busy) { card.el.remove(); this.cards.delete(id); }
    }
    let previous = null;
    for (const c of changes) {
      let card = this.cards.get(c.change_id);
      if (!card) {
        card = new ChangeCard(c, this);
        this.cards.set(c.change_id, card);
      }
      card.tick();
      if (!card.el.isConnected) {  // a new card; cards on the page stay put (focus, typing)
        if (previous) previous.el.after(card.el); else this.list.prepend(card.el);
      }
      previous = card;
    }
    this.emptyCheck();
  }
}
