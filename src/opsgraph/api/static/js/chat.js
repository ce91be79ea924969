// The chat view: the caller's conversations, one conversation at a time, and the message
// box. A conversation is drawn from its stored events and follows them live, so an answer
// that arrives after a manager's decision (made in another browser) shows without a reload.

import {api, postStream, ThreadFollower, ApiError} from "./api.js";
import {h, fill, ago, statusPill} from "./dom.js";
import {Conversation} from "./conversation.js";

const FOLLOWING = new Set(["running", "awaiting_approval"]);
const REFRESH_MS = 15000;

export class ChatView {
  constructor(root, app) {
    this.app = app;
    this.threadId = null;
    this.follower = null;
    this.conv = null;
    this.busy = false;
    this.list = h("ul", {class: "thread-list", "aria-label": "Conversations"});
    this.title = h("h2", {class: "conv-title"}, "New conversation");
    this.status = h("span", {class: "conv-status"});
    this.live = h("span", {class: "live-state", role: "status"});
    this.log = h("div", {class: "log", role: "log", "aria-label": "Conversation"});
    this.empty = h("div", {class: "empty-chat"});
    this.input = h("textarea", {id: "message", name: "message", rows: "1", autocomplete: "off",
      placeholder: "Ask for something…", onkeydown: (e) => this.onKey(e),
      oninput: () => this.grow()});
    this.sendButton = h("button", {type: "submit", class: "primary"}, "Send");
    this.stopButton = h("button", {type: "button", class: "danger", hidden: true,
      onclick: () => this.stop()}, "Stop");
    this.form = h("form", {class: "composer", onsubmit: (e) => { e.preventDefault(); this.sendTyped(); }},
      h("label", {for: "message", class: "sr-only"}, "Message"), this.input, this.sendButton,
      this.stopButton);
    this.reading = h("p", {class: "reading", hidden: true});
    // on a phone the conversation has the screen and the list is behind this button
    this.threadsButton = h("button", {type: "button", class: "small threads-toggle",
      "aria-controls": "threads", "aria-expanded": "false",
      onclick: () => this.showThreads(!this.chat.classList.contains("threads-open"))}, "Conversations");
    this.chat = h("div", {class: "chat"},
      h("aside", {class: "threads", id: "threads", "aria-label": "Your conversations"},
        h("div", {class: "threads-head"}, h("h2", {}, "Conversations"),
          h("span", {class: "threads-actions"},
            h("a", {class: "button small", href: "#/", onclick: () => this.showThreads(false)}, "New"),
            h("button", {type: "button", class: "small threads-toggle", onclick: () => this.showThreads(false)}, "Back"))),
        this.list),
      h("section", {class: "conversation"},
        h("header", {class: "conv-head"}, this.threadsButton, this.title, this.status, this.live),
        this.log, this.empty, this.form, this.reading));
    fill(root, this.chat);
    this.timer = setInterval(() => { if (!document.hidden) this.refreshThreads(); }, REFRESH_MS);
  }

  /** Show or hide the list of conversations (a phone's screen has room for one of the two). */
  showThreads(open) {
    this.chat.classList.toggle("threads-open", open);
    this.threadsButton.setAttribute("aria-expanded", String(open));
    if (open) this.list.querySelector("a")?.focus();
  }

  onKey(e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.sendTyped();
    }
  }

  /** The message box grows with what is typed (up to its CSS max-height). */
  grow() {
    this.input.style.height = "auto";
    this.input.style.height = `${this.input.scrollHeight + 2}px`;
  }

  async refreshThreads() {
    if (!this.app.me) {
      fill(this.list, h("li", {class: "muted empty-list"}, "Sign in to keep your conversations here."));
      return;
    }
    let threads;
    try {
      threads = await api("/v1/threads");
    } catch (error) {
      fill(this.list, h("li", {class: "muted empty-list"}, `Conversations cannot be listed: ${error.message}`));
      return;
    }
    if (!threads.length) {
      fill(this.list, h("li", {class: "muted empty-list"}, "No conversations yet. Ask something to start one."));
      return;
    }
    fill(this.list, threads.map((t) => {
      const mine = !t.requester || t.requester.user_id === this.app.me.user;
      return h("li", {}, h("a", {href: `#/threads/${encodeURIComponent(t.thread_id)}`,
        onclick: () => this.showThreads(false),  // the one on screen too (no hashchange)
        class: `thread-item${t.thread_id === this.threadId ? " active" : ""}`,
        "aria-current": t.thread_id === this.threadId ? "page" : null},
        h("span", {class: "thread-title"}, t.title || "Untitled"),
        h("span", {class: "thread-meta"}, statusPill(t.status, t.status_label),
          t.pending ? h("span", {class: "count"}, `${t.pending} pending`) : null,
          mine ? null : h("span", {class: "muted"}, t.requester.name || t.requester.user_id),
          h("span", {class: "muted"}, ago(t.updated_at)))));
    }));
  }

  stopFollowing() {
    if (this.follower) this.follower.stop();
    this.follower = null;
    this.live.textContent = "";
  }

  follow(conv) {
    this.stopFollowing();
    const follower = new ThreadFollower(this.threadId, {
      lastId: conv.lastId,
      onEvent: (ev) => conv.apply(ev),
      wantsMore: () => FOLLOWING.has(conv.lastStatus),
      onState: (state, error) => {
        if (this.follower !== follower) return;
        this.live.textContent = state === "reconnecting" ? "Reconnecting…" : "";
        this.live.dataset.state = state;
        if (state === "closed" && error) conv.turn?.note(`Live updates stopped: ${error.message}`, "error");
      },
    });
    this.follower = follower.start();
  }

  newConversation(userMessages = []) {
    fill(this.log);
    this.conv = new Conversation(this.log, {userMessages, onFinished: (d) => this.finished(d),
      onOption: this.form.hidden ? null : (text) => this.send(text)});
    return this.conv;
  }

  /** Show a thread (null: a new conversation). */
  async open(threadId) {
    this.showThreads(false);
    this.stopFollowing();
    this.threadId = threadId;
    this.readOnly(null);
    this.newConversation();
    this.status.replaceChildren();
    this.emptyState(!threadId);
    this.refreshThreads();
    if (!threadId) {
      this.title.textContent = "New conversation";
      this.input.focus();
      return;
    }
    this.title.textContent = "Loading…";
    let detail;
    try {
      detail = await api(`/v1/threads/${encodeURIComponent(threadId)}`);
    } catch (error) {
      this.title.textContent = "Conversation not available";
      this.log.append(h("div", {class: "note note-error", role: "alert"},
        error.status === 404 ? "This conversation does not exist, or you may not read it." : error.message));
      return;
    }
    if (this.threadId !== threadId) return;
    this.title.textContent = detail.title || "Conversation";
    const requester = detail.requester || {};
    if (requester.user_id && this.app.me && requester.user_id !== this.app.me.user) this.readOnly(requester);
    this.status.replaceChildren(statusPill(detail.status, detail.status_label));
    const asked = (detail.messages || []).filter((m) => m.role === "user").map((m) => m.content);
    const conv = this.newConversation(asked);
    conv.lastStatus = "running";  // follow the replay to its end, then decide
    this.follow(conv);
  }

  /** Someone else's conversation (a manager reading a thread that carried a change) is
   * read, not continued: only its requester adds to it. */
  readOnly(requester) {
    this.form.hidden = !!requester;
    this.reading.hidden = !requester;
    if (requester) this.reading.textContent = `You are reading ${requester.name || requester.user_id}’s conversation; only they can add to it.`;
  }

  emptyState(show) {
    this.empty.hidden = !show;
    if (!show) return;
    const examples = (this.app.info && this.app.info.mode === "demo" && this.app.info.examples) || [];
    fill(this.empty,
      h("h3", {}, "What can I help with?"),
      h("p", {class: "muted"}, "Ask about members, bookings, classes and invoices. Any change waits for a manager’s approval before it happens."),
      examples.length ? h("div", {class: "examples"},
        h("p", {class: "examples-label"}, "Demo mode: try one of these"),
        examples.map((text) => h("button", {type: "button", class: "example", onclick: () => this.send(text)}, text))) : null);
  }

  sendTyped() {
    const message = this.input.value.trim();
    if (!message) { this.input.focus(); return; }
    this.send(message);
  }

  async send(message) {
    if (this.busy) return;
    this.busy = true;
    this.sendButton.disabled = true;
    this.input.value = "";
    this.grow();
    this.emptyState(false);
    if (!this.threadId) this.newConversation();
    const conv = this.conv;
    conv.ask(message);
    this.stopFollowing();
    try {
      await postStream("/v1/runs", {message, thread_id: this.threadId || undefined}, (ev) => {
        if (ev.event === "run_started") this.showStop(ev.data.run_id);
        if (ev.event === "run_finished") this.showStop(null);
        if (ev.event === "run_started" && ev.data.thread_id && !this.threadId) {
          this.threadId = ev.data.thread_id;
          history.replaceState(null, "", `#/threads/${encodeURIComponent(this.threadId)}`);
          this.title.textContent = message.length > 60 ? `${message.slice(0, 60)}…` : message;
        }
        conv.apply(ev);
      });
    } catch (error) {
      conv.turn.setBusy(false);
      conv.turn.note(error instanceof ApiError ? error.message : String(error), "error",
        error.status === 429 ? "Too many requests at once: wait a moment and send it again." : "");
    } finally {
      this.showStop(null);
      this.busy = false;
      this.sendButton.disabled = false;
      this.input.focus();
    }
    if (this.threadId && FOLLOWING.has(conv.lastStatus)) this.follow(conv);
    this.refreshThreads();
  }

  /** The Stop button, shown while the run `runId` is in flight (null: hidden). */
  showStop(runId) {
    this.runId = runId;
    this.stopButton.hidden = !runId;
    this.stopButton.disabled = false;
  }

  /** Ask the run in flight to stop: it ends at its next step, its cards withdrawn. */
  async stop() {
    if (!this.runId) return;
    this.stopButton.disabled = true;
    try {
      await api(`/v1/runs/${encodeURIComponent(this.runId)}/cancel`, {method: "POST"});
      this.conv?.turn?.setBusy(true, "Stopping…");
    } catch (error) {
      this.stopButton.disabled = false;
      this.conv?.turn?.note(`The run could not be stopped: ${error.message}`, "error");
    }
  }

  async finished(data) {
    this.status.replaceChildren(statusPill(data.status, data.status_label));
    this.refreshThreads();
    this.app.refreshBadge();
    if (!this.threadId || !this.app.me) return;
    try {
      const detail = await api(`/v1/threads/${encodeURIComponent(this.threadId)}`);
      const pending = new Set((detail.pending || []).map((c) => c.change_id));
      for (const turn of this.conv.turns) turn.settleChanges(pending);
    } catch { /* the chips keep their last state */ }
  }

  hide() {
    this.stopFollowing();
    clearInterval(this.timer);
  }
}

