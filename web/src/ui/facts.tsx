// A description list of label and value pairs, each pair in its own <div> so the grid of .facts keeps them together.
import type { ComponentChildren } from 'preact';

export function Facts(props: { items: [string, ComponentChildren][]; testId?: string }) {
  return (
    <dl class="facts" data-testid={props.testId}>
      {props.items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
