// The approvals inbox (managers, admins): pending changes newest first, each with the
// request that produced it, who asked, the time left and old → new field by field; the
// manager approves, edits (a form from the operation's schema), asks for a revision or
// rejects. A decision that lost a race says who decided first. Cards that arrive while the
// page is open are announced (a live region, the count in the tab's title, a browser
// notification when allowed); the keyboard moves between cards (j/k, arrows) and decides
// the focused one (SHORTCUTS).

import {api} from "./api.js";
import {h, fill, ago, timeLeft, shown, operationLabel, toast} from "./dom.js";
import {EditForm} from "./editform.js";

const POLL_MS = 5000;
const SHORTCUTS = [["j / ↓", "next card"], ["k / ↑", "previous card"], ["a", "approve"],
  ["e", "edit"], ["r", "revise"], ["x", "reject"], ["Esc", "close a form"]];
const DONE_WORDS = {approve: "Approved", edit: "Edited and approved", revise: "Sent back for revision", reject: "Rejected"};

/** A change's fields, old → new, in the API's words (`fields`: money with the tenant's
 * currency, statuses as people say them; ids left out for the names beside them). */
export function diffTable(card) {
  const rows = card.fields || [];
  if (!rows.length) return h("p", {class: "muted"}, "No field-level details for this change.");
  return h("div", {class: "table-wrap"}, h("table", {class: "diff"},
    h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Field"), h("th", {scope: "col"}, "Now"), h("th", {scope: "col"}, "After"))),
    h("tbody", {}, rows.map((r) => {
      const before = r.old === "—" ? "—" : shown(r.old);
      const after = r.new === "—" ? "—" : shown(r.new);
      return h("tr", {class: r.changed ? "changed" : "same"},
        h("th", {scope: "row"}, r.label),
        h("td", {class: "old"}, r.changed && r.old !== "—" ? h("del", {}, before) : before),
        h("td", {class: "new"}, r.changed ? h("ins", {}, after) : after));
    }))));
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
    this.el = h("article", {class: "card", tabindex: "0", dataset: {changeId: card.change_id}, "aria-label": card.summary,
      "aria-keyshortcuts": "A E R X J K"},
      h("header", {class: "card-head"}, h("span", {class: "op"}, operationLabel(card.operation)), this.expiry),
      h("h3", {class: "summary"}, card.summary),
      h("p", {class: "meta"}, "Asked by ", h("strong", {}, who), card.created_at ? ` · ${ago(card.created_at)}` : ""),
      card.request ? h("blockquote", {class: "request"}, card.request) : null,
      diffTable(card), this.buttons, this.panel, this.error);
    this.tick();
  }

  get busy() { return this.panel.childElementCount > 0 || this.el.classList.contains("settled"); }

  tick() {
    const left = timeLeft(this.card.expires_at);
    this.expiry.textContent = left;
    this.expiry.classList.toggle("soon", !!this.card.expires_at && new Date(this.card.expires_at) - Date.now() < 10 * 60000);
  }

  closePanel() { fill(this.panel); this.buttons.hidden = false; this.el.focus(); }

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
    // read before the buttons are disabled: a disabled button loses the focus
    this.hadFocus = this.el.contains(document.activeElement);
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
    const hadFocus = this.hadFocus || this.el.contains(document.activeElement);
    this.el.classList.add("settled", `settled-${kind}`);
    if (hadFocus) this.inbox.focusAfter(this);
    this.buttons.hidden = true;
    fill(this.panel, h("p", {class: `settled-note settled-note-${kind}`, role: "status"}, words));
    setTimeout(() => this.inbox.drop(this), kind === "ok" ? 2500 : 8000);
  }
}

export class InboxView {
  constructor(root, app) {
    this.app = app;
    this.cards = new Map();
    this.loaded = false;
    this.title = document.title;
    this.list = h("div", {class: "cards", onkeydown: (e) => this.onKey(e)});
    this.state = h("p", {class: "muted inbox-state", role: "status", tabindex: "-1"});
    this.news = h("p", {class: "sr-only", role: "status", "aria-live": "polite"});
    const notify = "Notification" in window && Notification.permission === "default"
      ? h("button", {type: "button", class: "small", onclick: (e) => {
        Notification.requestPermission().finally(() => { e.target.hidden = true; });
      }}, "Notify me of new changes") : null;
    fill(root, h("div", {class: "inbox"},
      h("header", {class: "view-head"}, h("h2", {}, "Approvals"),
        h("div", {class: "form-actions"}, notify,
          h("button", {type: "button", class: "small", onclick: () => this.refresh()}, "Refresh"))),
      h("p", {class: "muted"}, "Changes the assistant proposed. Nothing happens until you decide."),
      h("p", {class: "shortcuts", id: "inbox-keys"}, h("span", {class: "muted"}, "Keyboard: "),
        SHORTCUTS.map(([keys, does]) => h("span", {class: "shortcut"}, h("kbd", {}, keys), ` ${does}`))),
      this.state, this.news, this.list));
  }

  show() {
    this.refresh();
    clearInterval(this.timer);
    this.timer = setInterval(() => { if (!document.hidden) this.refresh(); }, POLL_MS);
  }

  hide() { clearInterval(this.timer); document.title = this.title; }

  /** The cards still to decide, in page order. */
  open() { return [...this.list.querySelectorAll(".card:not(.settled)")]; }

  focusAfter(card) {
    const open = this.open();
    const next = open.find((el) => card.el.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) || open.at(-1);
    if (next) next.focus(); else this.state.focus?.();
  }

  /** j/k and the arrows move between cards; a, e, r, x decide the focused one. Keys typed
   * in a form (a revision's feedback, an edit) are the form's; Esc closes it. */
  onKey(e) {
    const el = e.target.closest(".card");
    const card = el && this.cards.get(el.dataset.changeId);
    if (!card || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target.closest("form, input, textarea, select")) {
      if (e.key === "Escape") { e.preventDefault(); card.closePanel(); }
      return;
    }
    const move = {j: 1, ArrowDown: 1, k: -1, ArrowUp: -1}[e.key];
    if (move) {
      const open = this.open();
      const at = open.indexOf(el);
      const to = open[Math.min(open.length - 1, Math.max(0, at + move))];
      if (to) { e.preventDefault(); to.focus(); }
      return;
    }
    const act = {a: () => card.decide("approve"), e: () => card.openEdit(),
      r: () => card.openFeedback("revise"), x: () => card.openFeedback("reject")}[e.key.toLowerCase()];
    if (act && !card.busy) { e.preventDefault(); act(); }
  }

  /** New cards while the page is open: said in the live region, and as a browser
   * notification when the user allowed them and the tab is not in view. */
  announce(fresh) {
    if (!fresh.length) return;
    const words = fresh.length === 1 ? `New change to decide: ${fresh[0].card.summary}` : `${fresh.length} new changes to decide`;
    this.news.textContent = words;
    this.app.refreshBadge();
    for (const c of fresh) c.el.classList.add("arrived");
    if ("Notification" in window && Notification.permission === "granted" && document.hidden) {
      new Notification("opsgraph · approvals", {body: words, tag: "opsgraph-approvals"});
    }
  }

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
    const fresh = [];
    for (const c of changes) {
      let card = this.cards.get(c.change_id);
      if (!card) {
        card = new ChangeCard(c, this);
        this.cards.set(c.change_id, card);
        if (this.loaded) fresh.push(card);
      }
      card.tick();
      if (!card.el.isConnected) {  // a new card; cards on the page stay put (focus, typing)
        if (previous) previous.el.after(card.el); else this.list.prepend(card.el);
      }
      previous = card;
    }
    this.loaded = true;
    this.announce(fresh);
    document.title = changes.length ? `(${changes.length}) ${this.title}` : this.title;
    this.emptyCheck();
  }
}
