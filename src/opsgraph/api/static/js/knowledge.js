// Knowledge (admins): the tenant's documents with their sections; upload a Markdown or
// text file as a new document or over an existing one, remove one (a second click
// confirms); and a search box that shows what the knowledge agents would find for a
// question — the same `knowledge.search` they call.

import {api} from "./api.js";
import {h, fill, toast} from "./dom.js";

const SUFFIX_KIND = {md: "markdown", markdown: "markdown", txt: "text"};

/** "Opening Hours.md" → "opening-hours": the slug the API would take for the file. */
function slugOf(name) {
  return name.replace(/\.[^.]+$/, "").toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 120);
}

function size(bytes) {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10240 ? 1 : 0)} KB`;
}

export class KnowledgeView {
  constructor(root, app) {
    this.app = app;
    this.root = root;
  }

  async show() {
    fill(this.root, h("p", {class: "muted"}, "Loading the knowledge base…"));
    let data;
    try {
      data = await api("/v1/knowledge/documents");
    } catch (error) {
      fill(this.root, h("div", {class: "view"}, h("h2", {}, "Knowledge"),
        h("p", {class: "note note-error", role: "alert"}, error.status === 403 ? "Only admins manage the knowledge base." : error.message)));
      return;
    }
    this.upload = this.uploadPanel(data.documents);
    fill(this.root, h("div", {class: "view knowledge"},
      h("header", {class: "view-head"}, h("h2", {}, "Knowledge"),
        h("span", {class: "muted"}, `${data.documents.length} documents · knowledge version ${data.knowledge_version}`)),
      this.searchPanel(), this.upload.panel, this.documentsPanel(data.documents)));
  }

  searchPanel() {
    const box = h("input", {type: "search", id: "kb-query", maxlength: "500", required: true,
      placeholder: "e.g. when does the pool open on Sundays?"});
    const results = h("div", {class: "kb-results", "aria-live": "polite"});
    return h("form", {class: "panel", role: "search", onsubmit: async (e) => {
      e.preventDefault();
      fill(results, h("p", {class: "muted"}, "Searching…"));
      try {
        const {result} = await api("/v1/operations/knowledge.search", {method: "POST", body: {args: {query: box.value}}});
        fill(results, result.results.length ? h("ol", {class: "kb-hits"}, result.results.map((hit) =>
          h("li", {}, h("strong", {}, hit.title),
            h("span", {class: "muted"}, hit.kind !== "section" ? ` · catalogue ${hit.type || ""}`
              : (hit.document_title || hit.document) !== hit.title ? ` in ${hit.document_title || hit.document}` : ""),
            h("p", {class: "kb-snippet"}, hit.snippet))))
          : h("p", {class: "muted"}, "The agents would find nothing for that."));
      } catch (error) { fill(results, h("p", {class: "note note-error"}, error.message)); }
    }},
    h("h3", {}, h("label", {for: "kb-query"}, "Search the knowledge base")),
    h("p", {class: "muted"}, "What the assistant’s knowledge agents would find for this question, best first."),
    h("div", {class: "inline-form"}, box, h("button", {type: "submit", class: "primary"}, "Search")),
    results);
  }

  uploadPanel(documents) {
    const file = h("input", {type: "file", id: "kb-file", accept: ".md,.markdown,.txt,text/markdown,text/plain", required: true});
    const slug = h("input", {id: "kb-slug", required: true, maxlength: "120", pattern: "[a-z0-9]+(-[a-z0-9]+)*"});
    const title = h("input", {id: "kb-title", maxlength: "200"});
    const replacing = h("p", {class: "note note-wait", hidden: true});
    const error = h("div", {class: "form-error", role: "alert"});
    const save = h("button", {type: "submit", class: "primary"}, "Upload");
    const bySlug = new Map(documents.map((d) => [d.slug, d]));
    const showReplacing = () => {
      const old = bySlug.get(slug.value);
      replacing.hidden = !old;
      if (old) replacing.textContent = `This replaces “${old.title}” (version ${old.version}).`;
      save.textContent = old ? "Replace document" : "Upload";
    };
    file.addEventListener("change", () => {
      if (file.files[0] && !slug.dataset.typed) slug.value = slugOf(file.files[0].name);
      showReplacing();
    });
    slug.addEventListener("input", () => { slug.dataset.typed = "1"; showReplacing(); });
    const panel = h("form", {class: "panel", id: "kb-upload", onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = "";
      const chosen = file.files[0];
      const kind = SUFFIX_KIND[(chosen.name.split(".").pop() || "").toLowerCase()];
      if (!kind) { error.textContent = `${chosen.name}: not a .md or .txt file.`; return; }
      save.disabled = true;
      try {
        const body = {body: await chosen.text(), kind};
        if (title.value.trim()) body.title = title.value.trim();
        const done = await api(`/v1/knowledge/documents/${encodeURIComponent(slug.value)}`, {method: "PUT", body});
        toast(`${done.created ? "Added" : "Replaced"} “${done.title}”: ${done.sections} sections.`, "ok");
        await this.show();
      } catch (err) {
        error.textContent = err.status === 413 ? `${chosen.name} is too large: ${err.message}` : err.message;
      } finally { save.disabled = false; }
    }},
    h("h3", {}, "Upload a document"),
    h("p", {class: "muted"}, "A Markdown (.md) or plain text (.txt) file of at most 1 MiB. Its headings become the sections the agents search."),
    h("div", {class: "grid-form"},
      h("div", {class: "field"}, h("label", {for: "kb-file"}, "File"), file),
      h("div", {class: "field"}, h("label", {for: "kb-slug"}, "Slug"), slug,
        h("span", {class: "field-hint"}, "Lowercase words joined by “-”; an existing slug is replaced.")),
      h("div", {class: "field"}, h("label", {for: "kb-title"}, "Title (optional)"), title,
        h("span", {class: "field-hint"}, "Default: the document’s first heading."))),
    replacing, error, h("div", {class: "form-actions"}, save));
    return {panel, replace: (doc) => {
      slug.value = doc.slug;
      slug.dataset.typed = "1";
      showReplacing();
      panel.scrollIntoView({block: "start"});
      file.focus();
    }};
  }

  documentsPanel(documents) {
    if (!documents.length) {
      return h("section", {class: "panel"}, h("h3", {}, "Documents"), h("p", {class: "muted"}, "No documents yet: upload the club’s first one above."));
    }
    return h("section", {class: "panel"}, h("h3", {}, "Documents"),
      h("ul", {class: "kb-docs"}, [...documents].sort((a, b) => a.title.localeCompare(b.title)).map((d) => this.documentItem(d))));
  }

  documentItem(doc) {
    const sections = h("ol", {class: "kb-sections", hidden: true});
    const actions = h("div", {class: "row-actions"});
    const toggle = h("button", {type: "button", class: "small", "aria-expanded": "false", onclick: async () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      sections.hidden = !open;
      if (open && !sections.childElementCount) {
        try {
          const {result} = await api("/v1/operations/knowledge.file_outline", {method: "POST", body: {args: {document: doc.slug}}});
          fill(sections, result.sections.map((s) => h("li", {dataset: {level: String(s.level)}}, s.title)));
        } catch (error) { fill(sections, h("li", {class: "note note-error"}, error.message)); }
      }
    }}, `Sections (${doc.sections})`);
    const removeStep = () => fill(actions,
      h("span", {class: "confirm-words"}, `Remove “${doc.title}”?`),
      h("button", {type: "button", class: "small danger", onclick: async (e) => {
        e.target.disabled = true;
        try {
          await api(`/v1/knowledge/documents/${encodeURIComponent(doc.slug)}`, {method: "DELETE"});
          toast(`Removed “${doc.title}”.`, "ok");
          await this.show();
        } catch (error) { toast(error.message, "error"); e.target.disabled = false; }
      }}, "Remove document"),
      h("button", {type: "button", class: "small ghost", onclick: () => fill(actions, ...buttons())}, "Keep"));
    const buttons = () => [toggle,
      h("button", {type: "button", class: "small", onclick: () => this.upload.replace(doc)}, "Replace"),
      h("button", {type: "button", class: "small danger", onclick: removeStep}, "Remove")];
    fill(actions, ...buttons());
    return h("li", {class: "kb-doc", dataset: {slug: doc.slug}},
      h("div", {class: "kb-doc-head"},
        h("div", {class: "kb-doc-name"}, h("strong", {}, doc.title),
          h("span", {class: "muted"}, `${doc.slug} · ${doc.kind} · version ${doc.version} · ${size(doc.bytes)}`)),
        actions),
      sections);
  }

  hide() {}
}
