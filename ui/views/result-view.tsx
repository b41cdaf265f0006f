import type { CallResult, ContentItem } from '../types.js';

/** A CallToolResult by content type: text, JSON, image, audio, resource links and embedded resources. */
export function ResultView({ result }: { result: CallResult }) {
  return (
    <section class={result.isError ? 'result is-error' : 'result'} aria-label={result.isError ? 'Tool error' : 'Result'} role={result.isError ? 'alert' : undefined}>
      <h4>{result.isError ? 'Tool error' : 'Result'}</h4>
      {(result.content ?? []).map((item, i) => (
        <ContentView key={i} item={item} />
      ))}
      {result.structuredContent !== undefined && (
        <details open>
          <summary>Structured content</summary>
          <pre class="json">{JSON.stringify(result.structuredContent, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}

function textOrJson(text: string) {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null) return <pre class="json">{JSON.stringify(parsed, null, 2)}</pre>;
  } catch {
    // Not JSON: shown as it is.
  }
  return <pre class="text">{text}</pre>;
}

function ContentView({ item }: { item: ContentItem }) {
  switch (item.type) {
    case 'text':
      return textOrJson(item.text ?? '');
    case 'image':
      return <img class="result-image" alt="Image returned by the tool" src={`data:${item.mimeType ?? 'image/png'};base64,${item.data ?? ''}`} />;
    case 'audio':
      return <audio controls aria-label="Audio returned by the tool" src={`data:${item.mimeType ?? 'audio/wav'};base64,${item.data ?? ''}`} />;
    case 'resource_link':
      return (
        <p class="resource-link">
          Resource link: <code>{item.uri}</code>
          {item.name ? ` (${item.name})` : ''}
        </p>
      );
    case 'resource':
      return (
        <div class="resource">
          <p>
            Resource <code>{item.resource?.uri}</code>
          </p>
          {item.resource?.text !== undefined ? textOrJson(item.resource.text) : <p class="muted">binary, {item.resource?.mimeType ?? 'unknown type'}</p>}
        </div>
      );
    default:
      return <pre class="json">{JSON.stringify(item, null, 2)}</pre>;
  }
}
