// A source opened from an answer, in the record dialog: a knowledge document or section as
// its title, headings and text; any other record as its fields, labelled.

import {api} from "./api.js";
import {h, $, fill, fieldLabel, shown} from "./dom.js";

/** How a source of each kind is opened: the read operation and its arguments. */
const RECORD_READS = {
  member: ["members.get", (id) => ({member: id})],
  invoice: ["invoices.get", (id) => ({invoice: id})],
  document: ["knowledge.read", (id) => ({document: id})],
  section: ["knowledge.read_section", (id) => ({document: id.split("#")[0], section: id})],
  object: ["knowledge.get_object", (id) => ({object: id})]};
const KIND_WORDS = {member: "Member", invoice: "Invoice", document: "Document",
  section: "Document", object: "Item"};

/** A document's text as paragraphs (blank lines part them; the text stays text). */
function paragraphs(text) {
  return String(text || "").split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean)
    .map((p) => h("p", {}, p));
}

/** A section: where it sits in its document (its headings), then its text. */
function section(result) {
  const headings = (result.path || []).filter((t) => t && t !== result.document_title);
  return [headings.length ? h("p", {class: "record-where"}, headings.join(" › ")) : null,
    h("div", {class: "record-text"}, paragraphs(result.text))];
}

/** A document: its sections' headings, then its text. */
function documentView(result) {
  const headings = (result.sections || []).map((s) => s.title).filter((t) => t && t !== result.title);
  return [headings.length ? h("p", {class: "record-where"}, `Sections: ${headings.join(" · ")}`) : null,
    h("div", {class: "record-text"}, paragraphs(result.body))];
}

/** Any other record: its plain fields, labelled. */
function fields(result) {
  const rows = Object.entries(result || {}).filter(([, v]) => v === null || typeof v !== "object");
  return h("dl", {class: "record"}, rows.flatMap(([k, v]) => [h("dt", {}, fieldLabel(k)), h("dd", {}, shown(v))]));
}

/** Open the record dialog on source `kind` `id`. */
export async function openRecord(kind, id) {
  const dialog = $("#record");
  const body = $("#record-body");
  const title = $("#record-title");
  const kindWords = KIND_WORDS[kind] || fieldLabel(kind);
  title.textContent = kindWords;
  fill(body, h("p", {class: "muted"}, "Loading…"));
  if (!dialog.open) dialog.showModal();
  const read = RECORD_READS[kind];
  if (!read) { fill(body, h("p", {class: "muted"}, `There is no view for this kind of record yet (${kind} ${id}).`)); return; }
  try {
    const {result} = await api(`/v1/operations/${read[0]}`, {method: "POST", body: {args: read[1](id)}});
    const name = result && (result.document_title || result.name || result.title || result.number);
    title.textContent = name ? (kind === "section" || kind === "document" ? name : `${kindWords}: ${name}`) : kindWords;
    fill(body, kind === "section" ? section(result) : kind === "document" ? documentView(result) : fields(result));
  } catch (error) {
    fill(body, h("p", {class: "note note-error"}, error.message));
  }
}
