// Catalogue (admins): the club's resources, classes and events, membership plans,
// products and price lists — what the knowledge agents read prices and hours from. An
// object is added or edited as its fields (JSON) and checked whole by the server, which
// names every wrong field; an edit names the version it started from, so two people
// editing one object cannot overwrite each other unseen. Every change is audited.

import {api} from "./api.js";
import {h, fill, toast} from "./dom.js";

const TYPE_WORDS = {resource: "Resource", class: "Class", event: "Event", plan: "Membership plan",
  product: "Product", price_list: "Price list"};
const OWN = new Set(["type", "key", "version"]);

function fieldsOf(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !OWN.has(k)));
}

export class CatalogueView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
    this.type = "";
  }

  async show() {
    fill(this.root, h("p", {class: "muted"}, "Loading the catalogue…"));
    let data;
    try {
      data = await api("/v1/catalogue");
    } catch (error) {
      fill(this.root, h("div", {class: "view"}, h("h2", {}, "Catalogue"),
        h("p", {class: "note note-error", role: "alert"}, error.status === 403 ? "Only admins manage the catalogue." : error.message)));
      return;
    }
    this.data = data;
    this.editor = h("div", {class: "cat-editor"});
    this.table = h("div", {class: "table-wrap"});
    const filter = h("select", {id: "cat-type", onchange: () => { this.type = filter.value; this.drawTable(); }},
      h("option", {value: ""}, "All types"),
      data.types.map((t) => h("option", {value: t, selected: this.type === t}, TYPE_WORDS[t] || t)));
    fill(this.root, h("div", {class: "view catalogue"},
      h("header", {class: "view-head"}, h("h2", {}, "Catalogue"),
        h("button", {type: "button", class: "primary", onclick: () => this.edit(null)}, "Add an object")),
      h("p", {class: "muted"}, "What the assistant knows of the club’s resources, classes, events, plans and prices. Changes apply at once and are audited."),
      this.editor,
      h("section", {class: "panel"},
        h("div", {class: "inline-form"}, h("label", {for: "cat-type"}, "Type"), filter),
        this.table)));
    this.drawTable();
  }

  drawTable() {
    const shown = this.data.objects.filter((o) => !this.type || o.type === this.type);
    fill(this.table, shown.length ? h("table", {class: "agents cat-table"},
      h("thead", {}, h("tr", {}, ["Name", "Type", "Key", "Version", ""].map((t) => h("th", {scope: "col"}, t)))),
      h("tbody", {}, shown.map((o) => this.row(o))))
      : h("p", {class: "muted"}, "No objects of this type yet."));
  }

  row(obj) {
    const actions = h("div", {class: "row-actions"});
    const buttons = () => fill(actions,
      h("button", {type: "button", class: "small", onclick: () => this.edit(obj)}, "Edit"),
      h("button", {type: "button", class: "small danger", onclick: () => fill(actions,
        h("span", {class: "confirm-words"}, `Remove “${obj.name}”?`),
        h("button", {type: "button", class: "small danger", onclick: async (e) => {
          e.target.disabled = true;
          try {
            await api(`/v1/catalogue/${encodeURIComponent(obj.key)}`, {method: "DELETE"});
            toast(`Removed “${obj.name}”.`, "ok");
            await this.show();
          } catch (error) { toast(error.message, "error"); e.target.disabled = false; }
        }}, "Remove object"),
        h("button", {type: "button", class: "small ghost", onclick: buttons}, "Keep"))}, "Remove"));
    buttons();
    return h("tr", {dataset: {key: obj.key}},
      h("th", {scope: "row"}, obj.name),
      h("td", {}, TYPE_WORDS[obj.type] || obj.type),
      h("td", {}, h("code", {}, obj.key)),
      h("td", {dataset: {label: "version"}}, String(obj.version || 1)),
      h("td", {class: "actions-cell"}, actions));
  }

  /** The form for one object (null: a new one), above the table. */
  edit(obj) {
    const isNew = obj === null;
    const type = h("select", {id: "cat-edit-type", disabled: !isNew},
      this.data.types.map((t) => h("option", {value: t, selected: (obj ? obj.type : this.type || "resource") === t}, TYPE_WORDS[t] || t)));
    const key = h("input", {id: "cat-edit-key", required: true, maxlength: "80", readonly: !isNew,
      pattern: "[a-z0-9]+(-[a-z0-9]+)*", value: obj ? obj.key : ""});
    const text = h("textarea", {id: "cat-edit-fields", rows: "14", spellcheck: "false", class: "code"});
    const template = () => {
      const like = this.data.objects.find((o) => o.type === type.value);
      return like ? {...fieldsOf(like), name: ""} : {name: ""};
    };
    text.value = JSON.stringify(obj ? fieldsOf(obj) : template(), null, 2);
    type.addEventListener("change", () => { text.value = JSON.stringify(template(), null, 2); });
    const problems = h("ul", {class: "problems", role: "alert"});
    const save = h("button", {type: "submit", class: "primary"}, isNew ? "Add object" : "Save changes");
    fill(this.editor, h("form", {class: "panel", "aria-labelledby": "cat-edit-title", onsubmit: async (e) => {
      e.preventDefault();
      fill(problems);
      let fields;
      try { fields = JSON.parse(text.value); } catch (err) {
        fill(problems, h("li", {}, `The fields are not JSON: ${err.message}`));
        return;
      }
      save.disabled = true;
      try {
        const done = await api(`/v1/catalogue/${encodeURIComponent(key.value)}`, {method: "PUT",
          body: {object: {...fields, type: type.value}, if_version: isNew ? 0 : obj.version || 1}});
        toast(`${done.created ? "Added" : "Saved"} “${done.object.name}” (version ${done.object.version}).`, "ok");
        fill(this.editor);
        await this.show();
      } catch (err) {
        const listed = (err.fields || []).map((f) => h("li", {}, h("code", {}, f.field), ` ${f.message}`));
        fill(problems, listed.length ? listed : h("li", {}, err.message));
      } finally { save.disabled = false; }
    }},
    h("h3", {id: "cat-edit-title"}, isNew ? "Add an object" : `Edit ${obj.name}`),
    h("div", {class: "grid-form"},
      h("div", {class: "field"}, h("label", {for: "cat-edit-type"}, "Type"), type),
      h("div", {class: "field"}, h("label", {for: "cat-edit-key"}, "Key"), key,
        h("span", {class: "field-hint"}, "Lowercase words joined by “-”, e.g. court-3."))),
    h("div", {class: "field"}, h("label", {for: "cat-edit-fields"}, "Fields (JSON)"), text,
      h("span", {class: "field-hint"}, "Prices include VAT; hours are [opens, closes] as HH:MM.")),
    problems,
    h("div", {class: "form-actions"}, save,
      h("button", {type: "button", class: "ghost", onclick: () => fill(this.editor)}, "Cancel"))));
    this.editor.scrollIntoView({block: "start"});
    (isNew ? key : text).focus();
  }

  hide() {}
}
