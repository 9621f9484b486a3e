/**
 * Every string the widget shows, in one table: English, and French to prove the mechanism. The
 * element's `lang` attribute (or the page's) picks the table; a missing language falls back to English.
 */
const en = {
  ask: "Ask",
  placeholder: "Ask a question about your data",
  question: "Question",
  answering: "Answering…",
  answered: "Answer ready",
  chats: "Your chats",
  newChat: "New chat",
  suggestions: "Try asking",
  helpful: "Helpful",
  notHelpful: "Not helpful",
  comment: "What could be better? (optional)",
  send: "Send",
  thanks: "Thanks for your feedback",
  readAs: "Read as",
  trusted: "Verified definition",
  failed: "The answer failed",
  reconnecting: "Your session is being renewed…",
  chartFailed: "The chart could not be drawn",
  chart: "Chart",
  table: "Table",
  rows: "rows",
  filters: "Filters",
  apply: "Apply",
  from: "From",
  to: "To",
  choose: "Choose what you meant",
  loading: "Loading…",
  attach: "Attach a file",
  conversation: "Conversation",
  noAccess: "This page may not use Sightline"
}

export type Strings = typeof en

const fr: Strings = {
  ask: "Demander",
  placeholder: "Posez une question sur vos données",
  question: "Question",
  answering: "Réponse en cours…",
  answered: "Réponse prête",
  chats: "Vos conversations",
  newChat: "Nouvelle conversation",
  suggestions: "Essayez",
  helpful: "Utile",
  notHelpful: "Pas utile",
  comment: "Que pourrait-on améliorer ? (facultatif)",
  send: "Envoyer",
  thanks: "Merci pour votre avis",
  readAs: "Compris comme",
  trusted: "Définition vérifiée",
  failed: "La réponse a échoué",
  reconnecting: "Votre session est renouvelée…",
  chartFailed: "Le graphique n'a pas pu être dessiné",
  chart: "Graphique",
  table: "Tableau",
  rows: "lignes",
  filters: "Filtres",
  apply: "Appliquer",
  from: "Du",
  to: "Au",
  choose: "Choisissez ce que vous vouliez dire",
  loading: "Chargement…",
  attach: "Joindre un fichier",
  conversation: "Conversation",
  noAccess: "Cette page ne peut pas utiliser Sightline"
}

const tables: Readonly<Record<string, Strings>> = { en, fr }

/** The strings of a language tag (`fr`, `fr-CA`), English when the widget has none for it. */
export const stringsFor = (lang: string | null | undefined): Strings =>
  tables[(lang ?? "en").toLowerCase().split("-")[0]!] ?? en

/** The number format of a language tag, for the numbers of tables and figures. */
export const numberFormat = (lang: string | null | undefined): Intl.NumberFormat =>
  new Intl.NumberFormat(lang ?? "en", { maximumFractionDigits: 2 })
