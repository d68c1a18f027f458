// The segment builder: rules on contact fields (the custom-field catalog's too), list membership and recent opens or
// clicks, all or any of them, with a live count from the API (POST /segments/preview, under its deadline) as the rules
// change; saved as a segment for campaigns. A saved definition that nests groups is edited as JSON.
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Field, Form, Notice, Submit, messageOf, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { AudiencePage, counted } from './nav';
import { kindOfCatalogType, OPERATORS, SEGMENT_FIELDS, type FieldKind } from './profile';
import { definitionOf, groupOf, type Group, type Rule } from './segment-rules';

const COUNT_DELAY_MS = 400;
const NEW_RULE: Rule = { kind: 'field', field: 'email', op: 'contains', value: '' };

function RuleRow(props: {
  rule: Rule;
  index: number;
  fields: { key: string; label: string; kind: FieldKind }[];
  lists: { id: string; name: string }[];
  onChange: (rule: Rule) => void;
  onRemove: () => void;
}) {
  const { rule, index } = props;
  const n = index + 1;
  const select = (label: string, value: string, options: [string, string][], change: (v: string) => void) => (
    <label class="field">
      <span class="label">{label}</span>
      <select value={value} onChange={(e) => change((e.currentTarget as HTMLSelectElement).value)}>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
    </label>
  );
  const kindSelect = select(
    `Rule ${n}`,
    rule.kind,
    [
      ['field', 'A field'],
      ['list', 'List membership'],
      ['engagement', 'Engagement'],
    ],
    (kind) =>
      props.onChange(
        kind === 'list'
          ? { kind: 'list', op: 'in', list_id: props.lists[0]?.id ?? '' }
          : kind === 'engagement'
            ? { kind: 'engagement', event: 'opened', op: 'within', days: '30' }
            : NEW_RULE,
      ),
  );
  let body;
  if (rule.kind === 'list') {
    body = (
      <>
        {select(
          `Rule ${n} membership`,
          rule.op,
          [
            ['in', 'is in'],
            ['not_in', 'is not in'],
          ],
          (op) => props.onChange({ ...rule, op: op as 'in' | 'not_in' }),
        )}
        {select(
          `Rule ${n} list`,
          rule.list_id,
          props.lists.map((l) => [l.id, l.name]),
          (list_id) => props.onChange({ ...rule, list_id }),
        )}
      </>
    );
  } else if (rule.kind === 'engagement') {
    body = (
      <>
        {select(
          `Rule ${n} event`,
          rule.event,
          [
            ['opened', 'opened a message'],
            ['clicked', 'clicked a link'],
          ],
          (event) => props.onChange({ ...rule, event: event as 'opened' | 'clicked' }),
        )}
        {select(
          `Rule ${n} when`,
          rule.op,
          [
            ['within', 'within the last'],
            ['not_within', 'not within the last'],
          ],
          (op) => props.onChange({ ...rule, op: op as 'within' | 'not_within' }),
        )}
        <Field
          label={`Rule ${n} days`}
          name={`days-${n}`}
          type="number"
          inputMode="numeric"
          value={rule.days}
          onInput={(days) => props.onChange({ ...rule, days })}
        />
      </>
    );
  } else {
    const kind = props.fields.find((f) => f.key === rule.field)?.kind ?? 'text';
    const operator = OPERATORS[kind].find((o) => o.op === rule.op) ?? OPERATORS[kind][0]!;
    body = (
      <>
        {select(
          `Rule ${n} field`,
          rule.field,
          props.fields.map((f) => [f.key, f.label]),
          (field) => {
            const next = props.fields.find((f) => f.key === field)?.kind ?? 'text';
            props.onChange({ kind: 'field', field, op: OPERATORS[next][0]!.op, value: '' });
          },
        )}
        {select(
          `Rule ${n} comparison`,
          operator.op,
          OPERATORS[kind].map((o) => [o.op, o.label]),
          (op) => props.onChange({ ...rule, op }),
        )}
        {!operator.noValue &&
          (kind === 'status' ? (
            select(
              `Rule ${n} value`,
              rule.value,
              [
                ['', 'Choose'],
                ['active', 'active'],
                ['unsubscribed', 'unsubscribed'],
                ['deleted', 'deleted'],
              ],
              (value) => props.onChange({ ...rule, value }),
            )
          ) : kind === 'boolean' ? (
            select(
              `Rule ${n} value`,
              rule.value,
              [
                ['', 'Choose'],
                ['true', 'yes'],
                ['false', 'no'],
              ],
              (value) => props.onChange({ ...rule, value }),
            )
          ) : (
            <Field
              label={`Rule ${n} value`}
              name={`value-${n}`}
              type={kind === 'number' || operator.days ? 'number' : 'text'}
              value={rule.value}
              onInput={(value) => props.onChange({ ...rule, value })}
              hint={operator.list ? 'Separated by commas.' : kind === 'date' && !operator.days ? 'A day, YYYY-MM-DD.' : undefined}
            />
          ))}
      </>
    );
  }
  return (
    <li class="search-row segment-rule" data-testid="segment-rule">
      {kindSelect}
      {body}
      <button type="button" class="secondary" onClick={props.onRemove} aria-label={`Remove rule ${n}`}>
        Remove
      </button>
    </li>
  );
}

/** The live count: asked for once the rules stop changing, the latest answer shown (an older one arriving late is dropped). */
function LiveCount(props: { definition: Record<string, unknown> | undefined }) {
  const key = JSON.stringify(props.definition ?? null);
  const [state, setState] = useState<{ key: string; count?: number; error?: unknown }>({ key: '' });
  useEffect(() => {
    if (!props.definition) return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const answer = await unwrap(api.POST('/segments/preview', { body: { definition: props.definition! } }));
        if (live) setState({ key, count: answer.count });
      } catch (error) {
        if (live) setState({ key, error });
      }
    }, COUNT_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  let words = 'Finish the rules to count.';
  if (props.definition)
    words = state.key !== key ? 'Counting…' : state.error ? messageOf(state.error) : `${counted(state.count!, 'contact matches', 'contacts match')} now`;
  return (
    <p role="status" class={state.error && state.key === key ? 'field-error' : 'verdict'} data-testid="live-count">
      {words}
    </p>
  );
}

export default function Segment() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'] === 'new' ? undefined : params['id'];
  const [name, setName] = useState('');
  const [group, setGroup] = useState<Group | undefined>({ op: 'AND', rules: [NEW_RULE] });
  const [json, setJson] = useState('');
  const [saved, setSaved] = useState(false);
  const options = useLoad(async () => {
    const [catalog, lists] = await Promise.all([
      unwrap(api.GET('/contact-custom-fields')),
      unwrapList(api.GET('/lists', { params: { query: { limit: 200 } } })),
    ]);
    const custom = catalog.items.map((f) => ({ key: `custom_fields.${f.key}`, label: f.label, kind: kindOfCatalogType(f.type) }));
    return { fields: [...SEGMENT_FIELDS, ...custom], lists: lists.items };
  }, []);
  const stored = useLoad(
    async () => (id ? unwrap(api.GET('/segments/{id}', { params: { path: { id } } })) : undefined),
    [id],
    (s) => {
      if (!s) return;
      setName(s.name);
      setGroup(groupOf(s.definition));
      setJson(JSON.stringify(s.definition, null, 2));
    },
  );
  const kindOf = (field: string) => options.data?.fields.find((f) => f.key === field)?.kind ?? 'text';
  let definition: Record<string, unknown> | undefined;
  if (group) definition = definitionOf(group, kindOf);
  else {
    try {
      definition = JSON.parse(json) as Record<string, unknown>;
    } catch {
      definition = undefined;
    }
  }
  const save = useAction(async () => {
    if (!definition) throw new Error('Finish the rules first.');
    const body = { name: name.trim(), definition };
    if (id) await unwrap(api.PATCH('/segments/{id}', { params: { path: { id } }, body }));
    else route(`/app/audiences/segments/${(await unwrap(api.POST('/segments', { body }))).id}`, true);
    setSaved(true);
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/segments/{id}', { params: { path: { id: id! } } }));
    route('/app/audiences/segments');
  });
  const change = (next: Group) => {
    setSaved(false);
    setGroup(next);
  };
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <AudiencePage title={id ? (stored.data?.name ?? 'Segment') : 'New segment'}>
      <ErrorNotice error={stored.error ?? options.error} />
      {stored.data && stored.data.stale_rules.length > 0 && (
        <Notice kind="warning" title="Rules that match no one">
          {stored.data.stale_rules.map((r) => `${r.path}: ${r.problem}`).join('; ')}
        </Notice>
      )}
      <section class="card" aria-labelledby="rules-heading">
        <h2 id="rules-heading">Rules</h2>
        <LiveCount definition={definition} />
        {group && options.data ? (
          <>
            <label class="field">
              <span class="label">Contacts who match</span>
              <select value={group.op} onChange={(e) => change({ ...group, op: (e.currentTarget as HTMLSelectElement).value as 'AND' | 'OR' })}>
                <option value="AND">all of the rules</option>
                <option value="OR">any of the rules</option>
              </select>
            </label>
            <ol class="segment-rules">
              {group.rules.map((rule, i) => (
                <RuleRow
                  key={i}
                  rule={rule}
                  index={i}
                  fields={options.data!.fields}
                  lists={options.data!.lists}
                  onChange={(r) => change({ ...group, rules: group.rules.map((x, j) => (j === i ? r : x)) })}
                  onRemove={() => change({ ...group, rules: group.rules.filter((_, j) => j !== i) })}
                />
              ))}
            </ol>
            <button type="button" class="secondary" onClick={() => change({ ...group, rules: [...group.rules, NEW_RULE] })}>
              Add a rule
            </button>
          </>
        ) : (
          !group && (
            <div class="field">
              <label for="segment-json">Definition (JSON: its groups nest deeper than the builder shows)</label>
              <textarea id="segment-json" class="mono" rows={12} value={json} onInput={(e) => setJson((e.currentTarget as HTMLTextAreaElement).value)} />
            </div>
          )
        )}
      </section>
      {canWrite && (
        <section class="card" aria-labelledby="save-heading">
          <h2 id="save-heading">Save</h2>
          <ErrorNotice error={save.error} />
          <div aria-live="polite">{saved && <Notice kind="done" title="Saved" />}</div>
          <Form onSubmit={save.run} label="Save the segment">
            <Field label="Segment name" name="name" value={name} onInput={setName} required />
            <Submit busy={save.busy}>{id ? 'Save segment' : 'Create segment'}</Submit>
          </Form>
          {id && (
            <div class="actions">
              <ErrorNotice error={remove.error} />
              <ConfirmButton label="Delete segment" title="Delete this segment?" onConfirm={() => void remove.run()} busy={remove.busy}>
                Campaigns that target it can no longer be sent until they target something else.
              </ConfirmButton>
            </div>
          )}
        </section>
      )}
    </AudiencePage>
  );
}
