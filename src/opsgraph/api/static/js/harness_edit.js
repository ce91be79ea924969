// The Harness view's panels for changing it: the change list between any two versions,
// the JSON editor that checks a document and saves it as a new version (every problem
// shown by its path in the JSON), and a test report's results.

import {api} from "./api.js";
import {h, fill, shown, toast} from "./dom.js";

const OP_WORDS = {added: "Added", removed: "Removed", changed: "Changed", moved: "Moved"};

/** A test report's results: each test passing or failing, with why. */
export function reportList(report) {
  if (!report.results.length) return h("p", {class: "muted"}, "This version has no tests.");
  return h("ul", {class: "test-results"}, report.results.map((r) => h("li", {class: r.passed ? "passed" : "failed"},
    h("span", {class: `pill ${r.passed ? "pill-completed" : "pill-failed"}`}, r.passed ? "Passed" : "Failed"), " ", r.name,
    r.failures && r.failures.length ? h("ul", {}, r.failures.map((f) => h("li", {class: "muted"}, f))) : null)));
}

function versionSelect(id, versions, selected) {
  return h("select", {id}, versions.map((v) => h("option", {value: String(v.version), selected: v.version === selected},
    `Version ${v.version}${v.active ? " (active)" : ""}`)));
}

export function changesPanel(versions, shownVersion, active) {
  const from = versionSelect("harness-from", versions, shownVersion === active ? Math.max(0, active - 1) : active);
  const to = versionSelect("harness-to", versions, shownVersion);
  const list = h("div", {"aria-live": "polite"});
  return h("form", {class: "panel", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const {changes} = await api(`/v1/harness/changes?from=${from.value}&to=${to.value}`);
      fill(list, changes.length ? h("table", {class: "diff harness-changes"},
        h("thead", {}, h("tr", {}, ["Change", "Where", "Before", "After"].map((t) => h("th", {scope: "col"}, t)))),
        h("tbody", {}, changes.map((c) => h("tr", {},
          h("td", {}, OP_WORDS[c.op] || c.op), h("th", {scope: "row"}, h("code", {}, c.path)),
          h("td", {}, c.old === null ? "—" : h("del", {}, shown(c.old))),
          h("td", {}, c.new === null ? "—" : h("ins", {}, shown(c.new)))))))
        : h("p", {class: "muted"}, `Versions ${from.value} and ${to.value} are the same.`));
    } catch (error) { fill(list, h("p", {class: "note note-error"}, error.message)); }
  }},
  h("h3", {}, "Compare versions"),
  h("div", {class: "inline-form"},
    h("label", {for: "harness-from"}, "From"), from, h("label", {for: "harness-to"}, "to"), to,
    h("button", {type: "submit", class: "small"}, "Compare")),
  list);
}

/** The problems of a document, each under the path of the JSON it is about. */
function problemList(problems) {
  return problems.map((p) => h("li", {}, h("code", {}, p.path), ` ${p.message}`));
}

export function editPanel(data, onSaved) {
  const text = h("textarea", {id: "harness-doc", rows: "18", spellcheck: "false", class: "code"});
  text.value = JSON.stringify(data.doc, null, 2);
  const note = h("input", {id: "harness-note", maxlength: "500"});
  const problems = h("ul", {class: "problems", role: "alert"});
  const parsed = () => {
    try { return JSON.parse(text.value); } catch (err) {
      fill(problems, h("li", {}, h("code", {}, "$"), ` not JSON: ${err.message}`));
      return null;
    }
  };
  const check = async () => {
    fill(problems);
    const doc = parsed();
    if (doc === null) return;
    try {
      const result = await api("/v1/harness/validate", {method: "POST", body: {doc}});
      if (result.valid) toast("The document is valid.", "ok"); else fill(problems, problemList(result.problems));
    } catch (error) { fill(problems, h("li", {}, error.message)); }
  };
  return h("details", {class: "panel harness-edit"},
    h("summary", {}, h("h3", {}, `Edit version ${data.version} as a new version`)),
    h("form", {onsubmit: async (e) => {
      e.preventDefault();
      fill(problems);
      const doc = parsed();
      if (doc === null) return;
      try {
        const saved = await api("/v1/harness/versions", {method: "POST", body: {doc, note: note.value}});
        toast(`Saved as version ${saved.version} (not active yet): ${saved.changes.length} changes from the active version.`, "ok");
        onSaved(saved.version);
      } catch (error) {
        fill(problems, error.detail.problems ? problemList(error.detail.problems) : h("li", {}, error.message));
      }
    }},
    h("div", {class: "field"}, h("label", {for: "harness-doc"}, "The version’s JSON"), text),
    h("div", {class: "field"}, h("label", {for: "harness-note"}, "Note (why this version)"), note),
    problems,
    h("div", {class: "form-actions"},
      h("button", {type: "button", onclick: check}, "Check"),
      h("button", {type: "submit", class: "primary"}, "Save as new version"))));
}
