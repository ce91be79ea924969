// One conversation drawn from its events: each request is a turn with its plan (one row
// per task, updated in place across resumes), its changes waiting for a manager, the
// streamed answer and the sources. Events are applied in order, each once (by its id).

import {h, fill, trimmed, operationLabel, labelled, rawData, toolLabel} from "./dom.js";

// The page's own words: a task in flight, and a finished task whose event carries no
// `status_label` (stored before the API named it) — the same words as opsgraph.status_words.
const TASK_STATES = {
  waiting: "Waiting", running: "Running", approval: "Needs approval", done: "Done",
  denied: "Not allowed", failed: "Failed", skipped: "Skipped", no_proposal: "Nothing proposed",
  partial: "Partly done", needs_input: "Asked which", withdrawn: "Withdrawn", stopped: "Stopped",
};
const FINISHED = {completed: "done", denied: "denied", failed: "failed", skipped: "skipped",
  no_proposal: "no_proposal", partial: "partial", needs_input: "needs_input",
  withdrawn: "withdrawn"};

class TaskRow {
  constructor(task) {
    this.state = "waiting";
    this.tools = h("div", {class: "tools", hidden: true});
    this.badge = h("span", {class: "task-state"});
    this.toggle = h("button", {type: "button", class: "task-head", "aria-expanded": "false",
      onclick: () => this.expand(this.tools.hidden)},
      h("span", {class: "task-dot", "aria-hidden": "true"}),
      h("span", {class: "task-agent"}, task.agent || `${task.domain}.${task.operation}`),
      h("span", {class: "task-text"}, task.instruction || ""), this.badge);
    this.el = h("li", {class: "task", dataset: {taskId: task.id}}, this.toggle, this.tools);
    this.setState("waiting");
  }

  expand(open) {
    this.tools.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
  }

  /** `words`: the API's words for what happened (else the state's own). */
  setState(state, words) {
    this.state = state;
    this.el.dataset.state = state;
    this.badge.textContent = words || TASK_STATES[state] || state;
  }

  setCalls(calls) {
    if (!calls || !calls.length) {
      fill(this.tools, h("p", {class: "muted"}, "No tools called."));
      return;
    }
    // what was asked, as labelled values; an error in its words; the raw data behind a toggle
    fill(this.tools, calls.map((c) => h("div", {class: `tool${c.ok === false ? " tool-failed" : ""}`},
      h("div", {class: "tool-name", title: c.tool || c.name}, toolLabel(c.tool || c.name)),
      labelled(c.args),
      c.ok === false ? h("p", {class: "tool-error"}, trimmed(c.result ?? "", 600)) : null,
      rawData("Raw data", ["Arguments", c.args], [c.ok === false ? "Error" : "Returned", c.result]))));
  }
}

export class Turn {
  constructor(message) {
    this.rows = new Map();
    this.plan = h("ol", {class: "tasks", "aria-label": "Plan"});
    this.work = h("div", {class: "work", hidden: true},
      h("div", {class: "work-title"}, "Plan"), this.plan);
    this.changes = h("ul", {class: "turn-changes", hidden: true});
    this.answer = h("div", {class: "bubble assistant", hidden: true});
    this.warning = h("div", {class: "note note-warning", role: "status", hidden: true});
    this.options = h("div", {class: "options", role: "group", "aria-label": "Choose an answer", hidden: true});
    this.sources = h("div", {class: "sources", hidden: true});
    this.notes = h("div", {class: "notes"});
    this.thinking = h("div", {class: "thinking"}, h("span", {class: "spinner", "aria-hidden": "true"}), "Working on it…");
    this.el = h("article", {class: "turn"},
      message ? h("div", {class: "bubble user"}, message) : null,
      this.work, this.changes, this.answer, this.warning, this.options, this.sources, this.notes,
      this.thinking);
    this.streaming = false;
  }

  row(taskId, fallback = {}) {
    if (!this.rows.has(taskId)) this.addTasks([{id: taskId, ...fallback}]);
    return this.rows.get(taskId);
  }

  addTasks(tasks) {
    this.work.hidden = false;
    for (const task of tasks) {
      if (this.rows.has(task.id)) continue;
      const row = new TaskRow(task);
      this.rows.set(task.id, row);
      this.plan.append(row.el);
    }
  }

  addChanges(cards) {
    this.changes.hidden = false;
    for (const card of cards) {
      if (card.task_id && this.rows.has(card.task_id)) this.rows.get(card.task_id).setState("approval");
      if (this.changes.querySelector(`[data-change-id="${CSS.escape(card.change_id)}"]`)) continue;
      this.changes.append(h("li", {class: "change-chip", dataset: {changeId: card.change_id, state: "pending"}},
        h("span", {class: "chip-op"}, operationLabel(card.operation)),
        h("span", {class: "chip-summary"}, card.summary),
        h("span", {class: "chip-state"}, "Waiting for a manager")));
    }
  }

  /** A change's outcome, as a resumed run's task reported it, on its chip. */
  settleChange(change) {
    if (!change.change_id || change.outcome === "pending") return;
    const chip = this.changes.querySelector(`[data-change-id="${CSS.escape(change.change_id)}"]`);
    if (!chip) return;
    chip.dataset.state = change.outcome === "applied" ? "applied" : "not_applied";
    chip.dataset.outcome = change.outcome;
    chip.querySelector(".chip-state").textContent = change.status_label || change.outcome;
  }

  /** Changes no longer pending whose outcome no event told (decided elsewhere) say so. */
  settleChanges(stillPending) {
    for (const chip of this.changes.querySelectorAll(".change-chip[data-state=pending]")) {
      if (stillPending.has(chip.dataset.changeId)) continue;
      chip.dataset.state = "decided";
      chip.querySelector(".chip-state").textContent = "No longer waiting";
    }
  }

  streamToken(text) {
    if (!this.streaming) { this.answer.textContent = ""; this.streaming = true; }
    this.answer.hidden = false;
    this.answer.textContent += text;
  }

  setAnswer(text, sources) {
    this.streaming = false;
    this.answer.hidden = !text;
    this.answer.textContent = text || "";
    if (sources && sources.length) {
      this.sources.hidden = false;
      fill(this.sources, h("span", {class: "sources-label"}, "Sources"),
        sources.map((s) => h("a", {class: "source", href: `#/record/${encodeURIComponent(s.kind)}/${encodeURIComponent(s.id)}`},
          s.title || s.id)));
    }
  }

  /** The answer's caveat (e.g. the tenant's harness failed and the built-in one answered). */
  setWarning(text) {
    this.warning.hidden = !text;
    this.warning.textContent = text ? `Note: ${text}` : "";
  }

  /** A clarifying question's options: each a button that sends its text as the next
   * message (`choose`), or shown disabled when this conversation cannot be added to. */
  setOptions(options, choose) {
    this.options.hidden = !options.length;
    fill(this.options, options.map((text) => h("button", {type: "button", class: "option",
      disabled: !choose, onclick: () => { this.closeOptions(); choose(text); }}, text)));
  }

  /** The question was answered (or the conversation moved on): its options are spent. */
  closeOptions() {
    for (const button of this.options.querySelectorAll("button")) button.disabled = true;
  }

  note(text, kind = "info", hint = "") {
    this.notes.append(h("div", {class: `note note-${kind}`, role: kind === "error" ? "alert" : null},
      text, hint ? h("div", {class: "note-hint"}, hint) : null));
  }

  setBusy(busy, text = "Working on it…") {
    this.thinking.hidden = !busy;
    this.thinking.lastChild.textContent = text;
  }
}

const ERROR_HINTS = {
  demo_mode: "Pick one of the example requests, or set OPSGRAPH_MODEL to a model you can reach.",
  too_many_requests: "Wait a moment and send it again.",
};

/** The conversation: turns, made from events. `userMessages` are the thread's messages
 * from the user, used (in order) for runs whose `run_started` does not carry one;
 * `onOption` sends a clarifying question's chosen option (null: options cannot be sent). */
export class Conversation {
  constructor(log, {userMessages = [], onFinished = () => {}, onOption = null} = {}) {
    this.log = log;
    this.userMessages = [...userMessages];
    this.onFinished = onFinished;
    this.onOption = onOption;
    this.turns = [];
    this.lastStatus = null;  // the last run's status: a run after `awaiting_approval` resumes
    this.lastId = 0;
    this.eventIds = [];
  }

  get turn() { return this.turns[this.turns.length - 1]; }

  /** Start a turn for a message the user is sending now (its run_started will follow). */
  ask(message) {
    this.pendingMessage = message;
    this.startTurn(message);
    this.turn.setBusy(true);
  }

  startTurn(message) {
    this.turn?.closeOptions();  // a later message answers (or passes over) the question
    const turn = new Turn(message);
    this.turns.push(turn);
    this.log.append(turn.el);
  }

  /** Apply one event; an event already applied (by id) is ignored. */
  apply(ev) {
    const seq = Number(ev.id);
    if (ev.id !== undefined && Number.isFinite(seq)) {
      if (seq <= this.lastId) return;
      this.lastId = seq;
    }
    this.eventIds.push(ev.id);
    this.log.dataset.eventIds = this.eventIds.join(" ");
    const handler = this[`on_${ev.event}`];
    if (handler) handler.call(this, ev.data || {});
    this.log.dispatchEvent(new CustomEvent("applied"));
  }

  on_run_started(data) {
    // a run resumed by decisions says so; an older stored run is told by the status before it
    const resumes = this.turns.length > 0 && (data.resumed !== undefined
      ? true : data.message === undefined && this.lastStatus === "awaiting_approval");
    if (this.pendingMessage !== undefined) {
      this.pendingMessage = undefined;  // the turn was started by ask()
    } else if (!resumes) {
      this.startTurn(data.message ?? this.userMessages.shift() ?? null);
    }
    this.lastStatus = "running";
    this.turn.setBusy(true, resumes ? "A manager decided: carrying on…" : "Working on it…");
  }

  on_plan(data) { this.turn.addTasks(data.tasks || []); }

  on_task_started(data) { this.turn.row(data.task_id, {agent: data.agent}).setState("running"); }

  on_task_finished(data) {
    const row = this.turn.row(data.task_id, {agent: data.agent});
    const changes = (data.calls || []).map((c) => c.change).filter(Boolean);
    const last = changes[changes.length - 1];
    // a task whose change did not apply did not do its job, whatever its status says
    const undone = data.status === "completed" && last && !["applied", "pending"].includes(last.outcome);
    row.setState(undone ? "not_done" : (FINISHED[data.status] || data.status), data.status_label);
    row.setCalls(data.calls);
    for (const change of changes) this.turn.settleChange(change);
  }

  on_progress(data) {
    if (data.stage === "waiting_for_model") {
      this.turn.setBusy(true, `Waiting for the model (${data.position} ahead)…`);
    }
  }

  on_token(data) { this.turn.setBusy(true, "Writing the answer…"); this.turn.streamToken(data.text || ""); }

  on_answer(data) {
    // a paused run's answer: what it read now (its cards are the chips); older stored
    // answers of a paused run have no `waiting` and are hidden when the run pauses
    this.turn.readNow = Array.isArray(data.waiting) ? (data.read || "") : null;
    this.turn.setAnswer(this.turn.readNow ?? data.text, data.sources);
    this.turn.setWarning(data.warning || "");
    this.turn.setOptions(Array.isArray(data.options) ? data.options.map(String) : [], this.onOption);
  }

  on_approval_required(data) { this.turn.addChanges(data.changes || []); }

  on_error(data) {
    const words = data.code === "demo_mode" ? "This request needs a real model." : "Something went wrong.";
    this.turn.note(`${words} ${data.message || ""}`.trim(), "error", ERROR_HINTS[data.code] || "");
  }

  on_run_finished(data) {
    this.lastStatus = data.status;
    this.turn.setBusy(false);
    if (data.status === "cancelled" || data.status === "failed") {  // no task goes on
      const state = data.status === "cancelled" ? "stopped" : "failed";
      for (const row of this.turn.rows.values()) {
        if (row.state === "running" || row.state === "waiting") row.setState(state);
      }
    }
    for (const n of this.turn.notes.querySelectorAll(".note-wait")) n.remove();
    if (data.status === "awaiting_approval") {
      this.turn.answer.hidden = !this.turn.readNow;  // the chips show the waiting changes
      this.turn.note(this.turn.readNow
        ? "Waiting for a manager to decide the changes. The rest of the answer appears here once they do."
        : "Waiting for a manager to decide. The answer appears here once they do.", "wait");
    }
    this.onFinished(data);
  }
}
