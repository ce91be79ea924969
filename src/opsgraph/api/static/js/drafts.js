// Email drafts (staff and up): replies the assistant drafted to inbound email. Each shows
// the original message, the reply, what the answer read (its sources) and where it stands;
// staff edit it, send it (a pending email change a manager approves, like any other write)
// or discard it. Nothing is sent from here without a manager's approval.

import {api} from "./api.js";
import {h, fill, ago, toast} from "./dom.js";

const POLL_MS = 15000;
const TONES = {draft: "awaiting_approval", not_sent: "failed", awaiting_approval: "running",
  sent: "completed", discarded: "cancelled"};

/** Staff, managers and admins review drafts. */
export const mayReviewDrafts = (me) => !!me && me.roles.some((r) => ["staff", "manager", "admin"].includes(r));

/** How many drafts wait for staff (drafts not sent yet): the navigation's count. */
export async function openDrafts() {
  const {open} = await api("/v1/drafts");
  return open;
}

function sender(original) {
  const name = original.from_name;
  return name ? `${name} <${original.from || ""}>` : original.from || "unknown sender";
}

function pill(draft) {
  return h("span", {class: `pill pill-${TONES[draft.status] || "unknown"}`}, draft.status_label);
}

class DraftDetail {
  constructor(draft, view) {
    this.draft = draft;
    this.view = view;
    this.error = h("div", {class: "card-error", role: "alert"});
    this.panel = h("div", {class: "draft-reply"});
    this.buttons = h("div", {class: "actions"});
    const original = draft.original;
    this.el = h("article", {class: "draft-detail", "aria-labelledby": "draft-title"},
      h("header", {class: "draft-head"},
        h("h3", {id: "draft-title", tabindex: "-1"}, original.subject || "(no subject)"), pill(draft)),
      h("p", {class: "meta"}, "From ", h("strong", {}, sender(original)),
        original.received_at ? ` · received ${ago(original.received_at)}` : ""),
      h("section", {"aria-label": "Their message"},
        h("h4", {}, "Their message"), h("blockquote", {class: "mail-body"}, original.body || "(no text)")),
      h("section", {"aria-label": "Reply"}, h("h4", {}, "Reply"), this.panel),
      this.sourcesList(), this.deniedNote(), this.changeNote(), this.buttons, this.error);
    this.showReply();
  }

  sourcesList() {
    const sources = this.draft.sources || [];
    if (!sources.length) return h("p", {class: "muted draft-sources"}, "The answer read no records or documents.");
    return h("section", {class: "draft-sources", "aria-label": "What the answer read"},
      h("h4", {}, "What the answer read"),
      h("ul", {class: "source-list"}, sources.map((s) => h("li", {},
        h("a", {class: "source", href: `#/record/${encodeURIComponent(s.kind)}/${encodeURIComponent(s.id)}`}, s.title || s.id)))));
  }

  deniedNote() {
    const denied = this.draft.denied || [];
    if (!denied.length) return null;
    return h("p", {class: "note note-wait"}, "Asked for by email and not done (email is read-only): ",
      denied.map((d) => d.operation).join(", "), ". A member of staff decides these.");
  }

  changeNote() {
    const change = this.draft.change;
    if (!change) return null;
    const who = change.decided_by_name ? ` by ${change.decided_by_name}` : "";
    const when = change.decided_at && change.status !== "pending" ? ` · ${ago(change.decided_at)}` : "";
    const tone = {not_sent: "note-error", sent: "note-ok"}[this.draft.status] || "note-wait";
    return h("p", {class: `note ${tone}`},
      `${change.status_label}${who}${when}`, change.feedback ? ` — “${change.feedback}”` : "",
      this.draft.status === "awaiting_approval" ? ". A manager decides it in Approvals." : "");
  }

  showReply() {
    const d = this.draft;
    fill(this.panel, h("dl", {class: "record"}, h("dt", {}, "To"), h("dd", {}, d.to || "—"),
      h("dt", {}, "Subject"), h("dd", {}, d.subject)),
    h("div", {class: "mail-body reply-body"}, d.body));
    fill(this.buttons,
      d.actions.send ? h("button", {type: "button", class: "primary", onclick: () => this.send()}, "Send") : null,
      d.actions.edit ? h("button", {type: "button", onclick: () => this.openEdit()}, "Edit") : null,
      d.actions.discard ? h("button", {type: "button", class: "danger", onclick: () => this.confirmDiscard()}, "Discard") : null);
    this.buttons.hidden = !this.buttons.childElementCount;
  }

  openEdit() {
    this.error.textContent = "";
    const subject = h("input", {id: "draft-subject", value: this.draft.subject, maxlength: "300"});
    const body = h("textarea", {id: "draft-body", rows: "8"});
    body.value = this.draft.body;
    fill(this.panel, h("form", {class: "draft-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.save(subject.value, body.value); }},
      h("div", {class: "field"}, h("label", {for: "draft-subject"}, "Subject"), subject),
      h("div", {class: "field"}, h("label", {for: "draft-body"}, "Reply text"), body),
      h("div", {class: "form-actions"},
        h("button", {type: "submit", class: "primary"}, "Save"),
        h("button", {type: "button", onclick: () => this.showReply()}, "Cancel"))));
    this.buttons.hidden = true;
    body.focus();
  }

  async act(path, method, body, words) {
    this.error.textContent = "";
    for (const b of this.el.querySelectorAll("button")) b.disabled = true;
    try {
      const draft = await api(path, {method, body});
      toast(words(draft), "ok");
      this.view.replace(draft);
      this.view.refresh(false);
    } catch (error) {
      for (const b of this.el.querySelectorAll("button")) b.disabled = false;
      this.error.textContent = error.message;
      if (error.status === 409) this.view.refresh();
    }
  }

  save(subject, body) {
    if (!body.trim()) { this.error.textContent = "The reply cannot be empty."; return; }
    this.act(`/v1/drafts/${encodeURIComponent(this.draft.draft_id)}`, "PUT", {subject, body}, () => "Draft saved");
  }

  send() {
    this.act(`/v1/drafts/${encodeURIComponent(this.draft.draft_id)}/send`, "POST", {},
      () => "Sent for approval: a manager decides it in Approvals");
  }

  confirmDiscard() {
    fill(this.buttons, h("span", {class: "muted"}, "Discard this draft? Nothing will be sent."),
      h("button", {type: "button", class: "danger", onclick: () => this.act(`/v1/drafts/${encodeURIComponent(this.draft.draft_id)}`, "DELETE", undefined, () => "Draft discarded")}, "Confirm discard"),
      h("button", {type: "button", onclick: () => this.showReply()}, "Keep it"));
    this.buttons.querySelector("button").focus();
  }
}

export class DraftsView {
  constructor(root, app) {
    this.app = app;
    this.selected = null;
    this.list = h("ul", {class: "draft-list", "aria-label": "Drafts"});
    this.detail = h("div", {class: "draft-pane"});
    this.state = h("p", {class: "muted", role: "status"});
    fill(root, h("div", {class: "view drafts"},
      h("header", {class: "view-head"}, h("h2", {}, "Email drafts"),
        h("button", {type: "button", class: "small", onclick: () => this.refresh()}, "Refresh")),
      h("p", {class: "muted"}, "Replies the assistant drafted to inbound email. Nothing goes out until you send it and a manager approves it."),
      this.state, h("div", {class: "drafts-layout"}, this.list, this.detail)));
  }

  show(draftId = null) {
    if (draftId) this.selected = draftId;
    this.refresh();
    clearInterval(this.timer);
    this.timer = setInterval(() => { if (!document.hidden) this.refresh(false); }, POLL_MS);
  }

  hide() { clearInterval(this.timer); }

  /** Reload the list; `redraw` also reloads the open draft. */
  async refresh(redraw = true) {
    let listed;
    try {
      listed = await api("/v1/drafts");
    } catch (error) {
      this.state.textContent = error.status === 403 ? "Only staff, managers and admins review email drafts." : `Drafts cannot be loaded: ${error.message}`;
      return;
    }
    this.app.refreshBadge();
    const drafts = listed.drafts;
    this.state.textContent = drafts.length ? "" : "No email drafts yet: inbound email answered by the assistant shows here.";
    fill(this.list, drafts.map((d) => h("li", {},
      h("a", {class: `draft-item${d.draft_id === this.selected ? " active" : ""}`, href: `#/drafts/${encodeURIComponent(d.draft_id)}`,
        "aria-current": d.draft_id === this.selected ? "true" : null},
      h("span", {class: "draft-from"}, d.original.from_name || d.original.from || "unknown sender"),
      h("span", {class: "draft-subject"}, d.original.subject || "(no subject)"),
      h("span", {class: "thread-meta"}, pill(d), d.original.received_at ? h("span", {class: "muted"}, ago(d.original.received_at)) : null)))));
    if (!this.selected && drafts.length) this.selected = drafts[0].draft_id;
    // a poll leaves the open draft alone (an edit or a confirmation may be under way)
    if (this.selected && (redraw || !this.current)) await this.open(this.selected, redraw);
  }

  async open(draftId, focus) {
    try {
      this.replace(await api(`/v1/drafts/${encodeURIComponent(draftId)}`), focus);
    } catch (error) {
      fill(this.detail, h("p", {class: "note note-error"}, error.message));
    }
  }

  /** Show `draft` in the pane (after a load or an action). */
  replace(draft, focus = true) {
    this.selected = draft.draft_id;
    this.current = new DraftDetail(draft, this);
    fill(this.detail, this.current.el);
    for (const a of this.list.querySelectorAll("a")) {
      const on = a.getAttribute("href") === `#/drafts/${encodeURIComponent(draft.draft_id)}`;
      a.classList.toggle("active", on);
      if (on) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
    }
    if (focus) this.current.el.querySelector("h3").focus({preventScroll: window.innerWidth > 760});
    this.app.refreshBadge();
  }
}
