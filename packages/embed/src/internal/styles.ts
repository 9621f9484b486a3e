/**
 * The widget's styles, as constructed stylesheets adopted by each shadow root: no `<style>` element
 * and no inline style, so a page's Content-Security-Policy needs no `unsafe-inline` for it. Theming
 * is by CSS custom properties set on the element (or any ancestor), and `part`s for the rest.
 */
const css = `
:host {
  --sl-font: var(--sightline-font, system-ui, sans-serif);
  --sl-text: var(--sightline-text, #1b1f24);
  --sl-muted: var(--sightline-muted, #57606a);
  --sl-background: var(--sightline-background, #ffffff);
  --sl-surface: var(--sightline-surface, #f6f8fa);
  --sl-border: var(--sightline-border, #d0d7de);
  --sl-accent: var(--sightline-accent, #0b57d0);
  --sl-accent-text: var(--sightline-accent-text, #ffffff);
  --sl-radius: var(--sightline-radius, 8px);
  display: block;
  font-family: var(--sl-font);
  color: var(--sl-text);
  background: var(--sl-background);
  line-height: 1.45;
}
* { box-sizing: border-box; }
.layout { display: grid; grid-template-columns: minmax(10rem, 14rem) 1fr; gap: 1rem; }
@media (max-width: 40rem) { .layout { grid-template-columns: 1fr; } }
nav { border-right: 1px solid var(--sl-border); padding-right: .75rem; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li button { width: 100%; text-align: left; }
h2 { font-size: 1rem; margin: .25rem 0 .5rem; }
.log { display: flex; flex-direction: column; gap: .75rem; min-height: 8rem; }
.turn { border: 1px solid var(--sl-border); border-radius: var(--sl-radius); padding: .75rem; background: var(--sl-background); }
.turn.user { background: var(--sl-surface); align-self: flex-end; max-width: 85%; }
.reading { color: var(--sl-muted); font-size: .875rem; }
.badge { display: inline-block; border: 1px solid var(--sl-accent); color: var(--sl-accent); border-radius: 999px; padding: 0 .5rem; font-size: .75rem; margin-left: .5rem; }
.error { color: #a40e26; }
button { font: inherit; border: 1px solid var(--sl-border); border-radius: var(--sl-radius); background: var(--sl-surface); color: var(--sl-text); padding: .35rem .75rem; cursor: pointer; }
button.primary { background: var(--sl-accent); color: var(--sl-accent-text); border-color: var(--sl-accent); }
button:focus-visible, textarea:focus-visible, input:focus-visible, [tabindex]:focus-visible { outline: 2px solid var(--sl-accent); outline-offset: 2px; }
form.ask { display: flex; gap: .5rem; margin-top: .75rem; align-items: flex-end; }
textarea, input { font: inherit; color: var(--sl-text); background: var(--sl-background); border: 1px solid var(--sl-border); border-radius: var(--sl-radius); padding: .4rem .5rem; }
textarea { flex: 1; min-height: 2.5rem; resize: vertical; }
.suggestions, .choices, .feedback { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0; }
.table-scroll { overflow: auto; max-height: 24rem; margin: .5rem 0; }
table { border-collapse: collapse; font-size: .875rem; }
th, td { border-bottom: 1px solid var(--sl-border); padding: .25rem .5rem; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { margin: .5rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.tiles { display: grid; grid-template-columns: repeat(12, 1fr); gap: .75rem; }
.tile { border: 1px solid var(--sl-border); border-radius: var(--sl-radius); padding: .75rem; min-width: 0; }
.figure { font-size: 1.75rem; font-weight: 600; }
.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; margin-bottom: .75rem; }
label { display: flex; flex-direction: column; font-size: .875rem; gap: .25rem; }
`

let sheet: CSSStyleSheet | undefined

/** The one stylesheet every shadow root of the widget adopts. */
export const stylesheet = (): CSSStyleSheet => {
  if (sheet === undefined) {
    sheet = new CSSStyleSheet()
    sheet.replaceSync(css)
  }
  return sheet
}
