// The admin views, by the name in their URL (#/<name>) and in their navigation link
// (#nav-<name>): shown only to admins, as the API refuses everyone else.

import {AnswerLogView} from "./answerlog.js";
import {CatalogueView} from "./catalogue.js";
import {HarnessView} from "./harness.js";
import {KnowledgeView} from "./knowledge.js";
import {SettingsView} from "./settings.js";

export const ADMIN_VIEWS = {
  settings: SettingsView, harness: HarnessView, knowledge: KnowledgeView,
  catalogue: CatalogueView, "answer-log": AnswerLogView,
};
