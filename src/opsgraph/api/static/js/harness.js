// The harness (admins): every version of the tenant's harness, and one of them — the
// active one unless another is picked — as its flowchart and its JSON. The server draws
// the flowchart as SVG from the same JSON the engine runs, so nothing is fetched or drawn
// here but what it sends. From here an admin runs a version's tests, activates it (its
// tests gate it; forcing past failing ones is a second, explicit step naming them), rolls
// back, compares any two versions, and edits the JSON into a new version (its problems
// listed by path). harness_edit.js holds the editing and comparing panels.

import {api} from "./api.js";
import {h, fill, ago, toast} from "./dom.js";
import {changesPanel, editPanel, reportList} from "./harness_edit.js";

/** The server's SVG as an element, without anything that could run (scripts, event
 * attributes, links): the page's policy forbids inline script anyway. */
function diagramOf(text) {
  const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (!svg || svg.nodeName !== "svg") return h("p", {class: "note note-error"}, "The flowchart could not be read.");
  for (const bad of svg.querySelectorAll("script, foreignObject, a")) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      if (/^on/i.test(attr.name) || /href$/i.test(attr.name)) el.removeAttribute(attr.name);
    }
  }
  return document.importNode(svg, true);
}

function testWords(last) {
  if (!last) return "not tested";
  return last.failed ? `${last.failed} failing, ${last.passed} passing` : `${last.passed} passing`;
}

export class HarnessView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
  }

  async show(version = null) {
    fill(this.root, h("p", {class: "muted"}, "Loading the harness…"));
    let data;
    try {
      data = await api(version === null ? "/v1/harness" : `/v1/harness?version=${version}`);
    } catch (error) {
      fill(this.root, h("div", {class: "view"}, h("h2", {}, "Harness"),
        h("p", {class: "note note-error", role: "alert"}, error.status === 403 ? "Only admins read the harness." : error.message)));
      return;
    }
    const title = (data.doc.metadata && data.doc.metadata.title) || `Version ${data.version}`;
    this.outcome = h("div", {class: "harness-outcome", "aria-live": "polite"});
    fill(this.root, h("div", {class: "view harness"},
      h("header", {class: "view-head"}, h("h2", {}, "Harness"),
        h("span", {class: "muted"}, `Version ${data.active} is active`),
        h("button", {type: "button", class: "small", onclick: () => this.rollback()}, "Roll back")),
      this.versionsPanel(data), this.outcome,
      changesPanel(data.versions, data.version, data.active),
      editPanel(data, (version) => this.show(version)),
      h("section", {class: "panel", "aria-labelledby": "harness-shown"},
        h("h3", {id: "harness-shown"}, `Version ${data.version}: ${title}`,
          data.version === data.active ? h("span", {class: "pill pill-completed"}, "Active") : null),
        h("figure", {class: "flowchart"}, diagramOf(data.svg),
          h("figcaption", {class: "muted"}, "Drawn from the version’s JSON below: the steps run from the top, following the arrows.")),
        h("details", {class: "harness-json"},
          h("summary", {}, `Version ${data.version} as JSON`),
          h("pre", {}, JSON.stringify(data.doc, null, 2))))));
  }

  versionsPanel(data) {
    return h("section", {class: "panel"}, h("h3", {}, "Versions"),
      h("div", {class: "table-wrap"}, h("table", {class: "agents versions"},
        h("thead", {}, h("tr", {},
          ["Version", "Note", "Saved", "Steps", "Tests", ""].map((t) => h("th", {scope: "col"}, t)))),
        h("tbody", {}, data.versions.map((v) => h("tr", {dataset: {version: String(v.version)}, class: v.active ? "active" : null},
          h("th", {scope: "row"}, String(v.version), v.active ? h("span", {class: "pill pill-completed"}, "Active") : null),
          h("td", {dataset: {label: "note"}}, v.note || ""),
          h("td", {dataset: {label: "saved"}}, v.created_at ? `${ago(v.created_at)} by ${v.created_by}` : "built in"),
          h("td", {dataset: {label: "steps"}}, String(v.steps)),
          h("td", {dataset: {label: "tests"}}, `${v.tests} ${v.tests === 1 ? "test" : "tests"}`, h("span", {class: "agent-desc"}, testWords(v.last_test))),
          h("td", {class: "actions-cell"}, h("div", {class: "row-actions"}, v.version === data.version ? h("span", {class: "muted"}, "Shown")
            : h("button", {type: "button", class: "small", onclick: () => this.show(v.version)}, `Show version ${v.version}`),
            v.tests ? h("button", {type: "button", class: "small", onclick: (e) => this.test(v.version, e.target)}, `Test version ${v.version}`) : null,
            v.active ? null : h("button", {type: "button", class: "small primary", onclick: (e) => this.activate(v.version, e.target)}, `Activate version ${v.version}`)))))))));
  }

  async test(version, button) {
    button.disabled = true;
    fill(this.outcome, h("p", {class: "note note-wait"}, `Running version ${version}’s tests…`));
    try {
      const report = await api(`/v1/harness/versions/${version}/test`, {method: "POST"});
      fill(this.outcome, h("section", {class: "panel"}, h("h3", {}, `Version ${version}: ${report.passed} passing, ${report.failed} failing`), reportList(report)));
    } catch (error) { fill(this.outcome, h("p", {class: "note note-error", role: "alert"}, error.message)); }
    button.disabled = false;
  }

  /** Activate `version`; failing tests stop it and offer forcing as a second step that
   * names them (the server refuses the force if other tests fail by then). */
  async activate(version, button, overriding = null) {
    button.disabled = true;
    fill(this.outcome, h("p", {class: "note note-wait"}, `Testing version ${version} before activating it…`));
    try {
      const done = await api(`/v1/harness/versions/${version}/activate`, {method: "POST",
        body: overriding ? {force: true, overriding} : {}});
      toast(`Version ${version} is active${done.forced ? ", forced past failing tests" : ""} (was version ${done.previous}).`, "ok");
      await this.show(version);
    } catch (error) {
      button.disabled = false;
      if (error.code !== "tests_failing") { fill(this.outcome, h("p", {class: "note note-error", role: "alert"}, error.message)); return; }
      const failing = error.detail.failing;
      fill(this.outcome, h("section", {class: "panel force", role: "alert"},
        h("h3", {}, `Version ${version} was not activated: ${failing.length} failing ${failing.length === 1 ? "test" : "tests"}`),
        h("ul", {class: "failing"}, failing.map((name) => h("li", {}, name))),
        h("p", {class: "muted"}, "Fix the version and test it again, or activate it anyway: that is recorded in the audit trail with the tests it overrode."),
        h("div", {class: "form-actions"},
          h("button", {type: "button", class: "danger", onclick: (e) => this.activate(version, e.target, failing)},
            `Activate anyway, overriding ${failing.join(", ")}`))));
    }
  }

  async rollback() {
    try {
      const done = await api("/v1/harness/rollback", {method: "POST"});
      toast(`Version ${done.version} is active again (was version ${done.previous}).`, "ok");
      await this.show(done.version);
    } catch (error) { fill(this.outcome, h("p", {class: "note note-error", role: "alert"}, error.message)); }
  }

  hide() {}
}
