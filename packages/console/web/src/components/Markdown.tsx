import ReactMarkdown from "react-markdown"
import remarkGfm from "remark-gfm"

/**
 * An answer's Markdown (bold, lists, tables, links), rendered safely: raw HTML in it is never passed
 * through (no `rehype-raw`): it shows as the text it is, and link URLs other than http(s), mailto
 * and relative ones are dropped (react-markdown's default URL transform).
 */
export function Markdown({ text }: { readonly text: string }) {
  return (
    <div className="answer-text markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]}>{text}</ReactMarkdown>
    </div>
  )
}
