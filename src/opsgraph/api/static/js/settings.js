// Settings (admins): the model each agent uses (the deployment's default, or a tenant
// override picked from the models the deployment allows) and the capability gate's mode.

import {api} from "./api.js";
import {h, fill, toast} from "./dom.js";

const GATE_MODES = [
  ["enforce", "Enforce", "A task is refused when the agent it was routed to does not serve that kind of request."],
  ["observe", "Observe", "Such a task runs and is logged, so you can review the log before enforcing."],
];

export class SettingsView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
  }

  async show() {
    fill(this.root, h("p", {class: "muted"}, "Loading settings…"));
    let agents, models, settings;
    try {
      [{agents}, models] = await Promise.all([api("/v1/agents"), api("/v1/tenant/models")]);
    } catch (error) {
      fill(this.root, h("div", {class: "view"}, h("h2", {}, "Settings"),
        h("p", {class: "note note-error", role: "alert"}, error.status === 403 ? "Only admins change settings." : error.message)));
      return;
    }
    try { settings = await api("/v1/tenant/settings"); } catch (error) { settings = {error}; }
    fill(this.root, h("div", {class: "view settings"},
      h("header", {class: "view-head"}, h("h2", {}, "Settings")),
      this.gatePanel(settings), this.modelsPanel(agents, models)));
  }

  modelsPanel(agents, models) {
    const info = this.app.info || {};
    const error = h("div", {class: "form-error", role: "alert"});
    const selects = new Map();
    const rows = [];
    let domain = null;
    for (const a of agents) {
      if (a.domain !== domain) {
        domain = a.domain;
        rows.push(h("tr", {class: "group"}, h("th", {colspan: "2", scope: "colgroup"}, domain.replaceAll("_", " "))));
      }
      rows.push(this.agentRow(a, models, selects));
    }
    const save = h("button", {type: "submit", class: "primary"}, "Save models");
    return h("form", {class: "panel", onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = "";
      const chosen = {};
      for (const [name, [select, rowError]] of selects) {
        rowError.textContent = "";
        if (select.value) chosen[name] = select.value;
      }
      save.disabled = true;
      try {
        await api("/v1/tenant/models", {method: "PUT", body: {models: chosen}});
        toast("Models saved.", "ok");
      } catch (err) {
        for (const {field, message} of err.fields) {
          const target = selects.get(String(field).replace(/^models\./, ""));
          if (target) target[1].textContent = message;
        }
        error.textContent = err.message;
      } finally { save.disabled = false; }
    }},
    h("h3", {}, "Models"),
    h("p", {class: "muted"}, info.message || "Each agent uses the deployment’s default model unless you pick another one here."),
    h("div", {class: "table-wrap"}, h("table", {class: "agents"},
      h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Agent"), h("th", {scope: "col"}, "Model"))),
      h("tbody", {}, rows))),
    error, h("div", {class: "form-actions"}, save));
  }

  agentRow(a, models, selects) {
    // without an override an agent runs on its tier's model (light agents on the light one)
    const fallback = a.default_model ? `Deployment default (${a.default_model})` : "Deployment default";
    const id = `model-${a.name.replace(/\W/g, "-")}`;
    const select = h("select", {id, "aria-label": `Model for ${a.name}`},
      h("option", {value: ""}, fallback),
      models.allowed.map((m) => h("option", {value: m.spec, selected: models.models[a.name] === m.spec}, `${m.provider} · ${m.model}`)));
    const rowError = h("span", {class: "field-error"});
    selects.set(a.name, [select, rowError]);
    // the description's first clause: the rest lists examples for the ranker
    const words = (a.description || "").split(/[:.](?:\s|$)/)[0];
    return h("tr", {},
      h("th", {scope: "row"}, h("label", {for: id}, a.name),
        h("span", {class: "agent-desc"}, words.length > 110 ? `${words.slice(0, 109)}…` : words)),
      h("td", {}, select, rowError));
  }

  gatePanel(settings) {
    if (settings.error) {
      return h("section", {class: "panel"}, h("h3", {}, "Capability gate"),
        h("p", {class: "note note-error"}, `The gate's mode cannot be read: ${settings.error.message}`));
    }
    const error = h("div", {class: "form-error", role: "alert"});
    const save = h("button", {type: "submit", class: "primary"}, "Save gate mode");
    return h("form", {class: "panel", onsubmit: async (e) => {
      e.preventDefault();
      const mode = new FormData(e.target).get("capability_mode");
      error.textContent = "";
      save.disabled = true;
      try {
        await api("/v1/tenant/settings", {method: "PUT", body: {capability_mode: mode}});
        toast(`Capability gate: ${mode}.`, "ok");
      } catch (err) { error.textContent = err.message; } finally { save.disabled = false; }
    }},
    h("fieldset", {class: "choices"}, h("legend", {}, h("h3", {}, "Capability gate")),
      GATE_MODES.map(([value, label, words]) => h("label", {class: "choice"},
        h("input", {type: "radio", name: "capability_mode", value, checked: settings.capability_mode === value}),
        h("span", {}, h("strong", {}, label), h("span", {class: "muted"}, words))))),
    error, h("div", {class: "form-actions"}, save));
  }

  hide() {}
}
