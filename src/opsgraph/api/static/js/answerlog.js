// Answer log (admins): the tenant's finished runs, newest first — what was asked and how
// it ended — filtered by outcome, period and words of the request; one run opens to its
// plan, the harness steps it ran, its tasks and the tools they called, its sources, its
// model calls and its outcome.

import {api} from "./api.js";
import {h, fill, ago, shown, statusPill} from "./dom.js";

const OUTCOMES = [["", "Any outcome"], ["completed", "Completed"], ["completed_with_errors", "Completed with errors"],
  ["awaiting_approval", "Waiting for approval"], ["cancelled", "Stopped"], ["failed", "Failed"]];
const PERIODS = [["", "Any time"], ["1", "Last 24 hours"], ["7", "Last 7 days"], ["30", "Last 30 days"]];

function select(id, options, onchange) {
  return h("select", {id, onchange}, options.map(([value, words]) => h("option", {value}, words)));
}

function labelled(entries) {
  return h("dl", {class: "record"}, entries.flatMap(([k, v]) => [h("dt", {}, k.replaceAll("_", " ")), h("dd", {}, shown(v))]));
}

export class AnswerLogView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
  }

  async show() {
    this.outcome = select("log-outcome", OUTCOMES, () => this.load());
    this.period = select("log-period", PERIODS, () => this.load());
    this.words = h("input", {type: "search", id: "log-words", maxlength: "200", oninput: () => this.draw()});
    this.list = h("div", {class: "table-wrap", "aria-live": "polite"});
    this.more = h("div", {class: "form-actions"});
    this.detail = h("div", {class: "log-detail"});
    fill(this.root, h("div", {class: "view answer-log"},
      h("header", {class: "view-head"}, h("h2", {}, "Answer log")),
      h("p", {class: "muted"}, "Every finished request, newest first: what was asked, what ran and how it ended."),
      h("section", {class: "panel"},
        h("div", {class: "filters"},
          h("div", {class: "field"}, h("label", {for: "log-outcome"}, "Outcome"), this.outcome),
          h("div", {class: "field"}, h("label", {for: "log-period"}, "Period"), this.period),
          h("div", {class: "field"}, h("label", {for: "log-words"}, "Request contains"), this.words)),
        this.list, this.more),
      this.detail));
    await this.load();
  }

  async load(before = null) {
    const query = new URLSearchParams({limit: "25"});
    if (this.outcome.value) query.set("outcome", this.outcome.value);
    if (this.period.value) query.set("days", this.period.value);
    if (before) query.set("before", before);
    if (!before) { this.runs = []; fill(this.list, h("p", {class: "muted"}, "Loading the log…")); }
    try {
      const page = await api(`/v1/answer-log?${query}`);
      this.runs.push(...page.runs);
      this.next = page.next;
    } catch (error) {
      fill(this.list, h("p", {class: "note note-error", role: "alert"}, error.status === 403 ? "Only admins read the answer log." : error.message));
      return;
    }
    this.draw();
  }

  draw() {
    const words = this.words.value.trim().toLowerCase();
    const runs = this.runs.filter((r) => !words || r.request.toLowerCase().includes(words));
    fill(this.list, runs.length ? h("table", {class: "agents log-table"},
      h("thead", {}, h("tr", {}, ["When", "Request", "Outcome", "Model calls", ""].map((t) => h("th", {scope: "col"}, t)))),
      h("tbody", {}, runs.map((r) => h("tr", {dataset: {run: r.run_id}},
        h("td", {class: "nowrap"}, ago(r.at)),
        h("th", {scope: "row", class: "log-request"}, r.request || "(no message)", r.resumed ? h("span", {class: "agent-desc"}, "resumed after a decision") : null),
        h("td", {}, statusPill(r.outcome)),
        h("td", {dataset: {label: "model calls"}}, String(r.model_calls)),
        h("td", {}, h("button", {type: "button", class: "small", onclick: () => this.open(r.run_id)}, "Open"))))))
      : h("p", {class: "muted"}, "No finished runs match."));
    fill(this.more, this.next ? h("button", {type: "button", class: "small", onclick: () => this.load(this.next)}, "Older runs") : null);
  }

  async open(runId) {
    fill(this.detail, h("p", {class: "muted"}, "Loading the run…"));
    let run;
    try { run = await api(`/v1/answer-log/${encodeURIComponent(runId)}`); } catch (error) {
      fill(this.detail, h("p", {class: "note note-error"}, error.message));
      return;
    }
    const section = (title, ...body) => h("div", {class: "log-part"}, h("h4", {}, title), ...body);
    const none = (words) => h("p", {class: "muted"}, words);
    fill(this.detail, h("section", {class: "panel", "aria-labelledby": "log-run-title"},
      h("h3", {id: "log-run-title"}, `“${run.request || "(no message)"}”`),
      h("p", {class: "muted"}, `${ago(run.at)} · `, statusPill(run.outcome), run.harness_version !== null ? ` · harness version ${run.harness_version}` : ""),
      run.error ? h("p", {class: "note note-error"}, run.error.message) : null,
      section("Plan", run.plan.length ? h("ol", {class: "log-plan"}, run.plan.map((t) =>
        h("li", {}, t.instruction, h("span", {class: "muted"}, ` — ${t.agent || "no agent"}`),
          (t.depends_on || []).length ? h("span", {class: "muted"}, ` (after ${t.depends_on.join(", ")})`) : null)))
        : none("No plan: the harness answered without the agents.")),
      section("Steps", run.steps ? h("p", {}, run.steps.join(" → ")) : none("Not recorded for this run.")),
      section("Tools called", run.tasks.some((t) => t.calls.length) ? h("ul", {class: "log-tools"}, run.tasks.flatMap((t) =>
        t.calls.map((c) => h("li", {}, h("strong", {}, c.tool), h("span", {class: "muted"}, ` by ${t.agent || t.task_id}`),
          c.args && typeof c.args === "object" ? labelled(Object.entries(c.args)) : null))))
        : none("No tools were called.")),
      section("Sources", run.sources.length ? h("ul", {class: "log-sources"}, run.sources.map((s) =>
        h("li", {}, s.title || s.id, h("span", {class: "muted"}, ` (${s.kind})`)))) : none("No sources.")),
      section("Model calls", labelled(Object.entries(run.usage).filter(([k, v]) => v || k === "model_calls")))));
    this.detail.scrollIntoView({block: "start"});
  }

  hide() {}
}
