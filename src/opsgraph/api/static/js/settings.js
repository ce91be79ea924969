// Settings (admins): the tenant's settings — the capability gate's mode, the reply to
// off-topic messages, the modules, which operations need a second person (separation of
// duties), whether an agent may force a harness activation, the currency — and the model
// each agent uses: the deployment's default for its tier, or a tenant override picked
// from the models the deployment allows, named as people know them.

import {api} from "./api.js";
import {h, fill, toast} from "./dom.js";

const GATE_MODES = [
  ["enforce", "Enforce", "A task is refused when the agent it was routed to does not serve that kind of request."],
  ["observe", "Observe", "Such a task runs and is logged, so you can review the log before enforcing."],
];
const TIERS = [["default", "Agents on the main model"], ["light", "Agents on the light model"]];

/** "invoices.refund" → "Invoices · refund". */
function opWords(op) {
  const [domain, verb] = op.split(".");
  return `${domain[0].toUpperCase()}${domain.slice(1)} · ${(verb || "").replaceAll("_", " ")}`;
}

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
      this.tenantPanel(settings), this.modelsPanel(agents, models)));
  }

  modelsPanel(agents, models) {
    const error = h("div", {class: "form-error", role: "alert"});
    const selects = new Map();
    const rows = [];
    for (const [tier, words] of TIERS) {
      const group = agents.filter((a) => a.model_tier === tier);
      if (!group.length) continue;
      rows.push(h("tr", {class: "group"}, h("th", {colspan: "2", scope: "colgroup"}, words,
        h("span", {class: "agent-desc"}, `The deployment’s default (${group[0].default_model_name}) unless you pick another`))));
      rows.push(...group.map((a) => this.agentRow(a, models, selects)));
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
    h("p", {class: "muted"}, "Each agent uses the deployment’s default model for its tier unless you pick another one here."),
    h("div", {class: "table-wrap"}, h("table", {class: "agents"},
      h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Agent"), h("th", {scope: "col"}, "Model"))),
      h("tbody", {}, rows))),
    error, h("div", {class: "form-actions"}, save));
  }

  agentRow(a, models, selects) {
    const id = `model-${a.name.replace(/\W/g, "-")}`;
    const select = h("select", {id, "aria-label": `Model for ${a.name}`},
      h("option", {value: ""}, `The deployment’s default (${a.default_model_name})`),
      models.allowed.map((m) => h("option", {value: m.spec, selected: models.models[a.name] === m.spec}, m.name)));
    const rowError = h("span", {class: "field-error"});
    selects.set(a.name, [select, rowError]);
    // the description's first clause: the rest lists examples for the ranker
    const words = (a.description || "").split(/[:.](?:\s|$)/)[0];
    return h("tr", {},
      h("th", {scope: "row"}, h("label", {for: id}, a.name),
        h("span", {class: "agent-desc"}, words.length > 110 ? `${words.slice(0, 109)}…` : words)),
      h("td", {}, select, rowError));
  }

  tenantPanel(settings) {
    if (settings.error) {
      return h("section", {class: "panel"}, h("h3", {}, "Tenant settings"),
        h("p", {class: "note note-error"}, `The settings cannot be read: ${settings.error.message}`));
    }
    const {choices} = settings;
    const error = h("div", {class: "form-error", role: "alert"});
    const save = h("button", {type: "submit", class: "primary"}, "Save settings");
    const currencies = choices.currencies.includes(settings.currency) ? choices.currencies : [settings.currency, ...choices.currencies];
    const checks = (name, values, on, words) => values.map((value) => h("label", {class: "check"},
      h("input", {type: "checkbox", name, value, checked: on.includes(value)}), words(value)));
    return h("form", {class: "panel", onsubmit: async (e) => {
      e.preventDefault();
      const form = new FormData(e.target);
      error.textContent = "";
      save.disabled = true;
      try {
        await api("/v1/tenant/settings", {method: "PUT", body: {
          capability_mode: form.get("capability_mode"), off_topic_reply: form.get("off_topic_reply"),
          modules: form.getAll("modules"), separation_of_duties: form.getAll("separation_of_duties"),
          harness_agent_may_force: form.get("harness_agent_may_force") === "on", currency: form.get("currency")}});
        toast("Settings saved.", "ok");
      } catch (err) {
        error.textContent = err.fields.length ? err.fields.map((f) => `${f.field.replaceAll("_", " ")}: ${f.message}`).join("; ") : err.message;
      } finally { save.disabled = false; }
    }},
    h("h3", {}, "Tenant settings"),
    h("fieldset", {class: "choices"}, h("legend", {}, "Capability gate"),
      GATE_MODES.map(([value, label, words]) => h("label", {class: "choice"},
        h("input", {type: "radio", name: "capability_mode", value, checked: settings.capability_mode === value}),
        h("span", {}, h("strong", {}, label), h("span", {class: "muted"}, words))))),
    h("div", {class: "field"}, h("label", {for: "off-topic"}, "Reply to messages that ask nothing of the club"),
      h("textarea", {id: "off-topic", name: "off_topic_reply", rows: "2", maxlength: "500"}, settings.off_topic_reply),
      h("span", {class: "field-hint"}, "Empty: the assistant’s own generic words.")),
    h("fieldset", {}, h("legend", {}, "Modules"),
      choices.modules.length ? checks("modules", choices.modules, settings.modules, (m) => m.replaceAll("_", " "))
        : h("p", {class: "muted"}, "No modules are shipped with this deployment.")),
    h("fieldset", {}, h("legend", {}, "Changes someone else must approve"),
      h("p", {class: "field-hint"}, "Whoever asked for one of these changes may not approve it themselves (separation of duties). None ticked: anyone with the role may."),
      h("div", {class: "check-grid"}, checks("separation_of_duties", choices.operations, settings.separation_of_duties, opWords))),
    h("label", {class: "check"}, h("input", {type: "checkbox", name: "harness_agent_may_force", checked: settings.harness_agent_may_force}),
      "An admin’s agent (over the admin MCP link) may activate a harness version whose tests fail"),
    h("div", {class: "field narrow"}, h("label", {for: "currency"}, "Currency"),
      h("select", {id: "currency", name: "currency"}, currencies.map((c) => h("option", {value: c, selected: c === settings.currency}, c))),
      h("span", {class: "field-hint"}, "How summaries and answers write amounts.")),
    error, h("div", {class: "form-actions"}, save));
  }

  hide() {}
}
