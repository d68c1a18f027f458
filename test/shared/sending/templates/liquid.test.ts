// The Liquid engine: supported features, escaping per part, one-line subjects, syntax errors with positions, no file access, DoS limits.
import t from 'tap';
import { AppError } from '../../../../shared/kernel/errors.js';
import {
  MAX_PART_BYTES,
  MAX_RENDERED_CHARS,
  parseTemplate,
  renderContext,
  renderTemplate,
  type TemplatePart,
} from '../../../../shared/sending/templates/liquid.js';

const contact = { email: 'ada@example.test', first_name: 'Ada', custom_fields: { plan: 'pro', country: 'IN' } };

function render(source: string, part: TemplatePart = 'body_text', input: Parameters<typeof renderContext>[0] = { contact }): string {
  return renderTemplate(parseTemplate(source, part), renderContext(input));
}

/** The subset of a tap Test used here. */
interface Assert {
  ok(value: unknown, message: string): unknown;
  equal(actual: unknown, expected: unknown, message: string): unknown;
  fail(message: string): unknown;
}

/** The 422 AppError a call throws, or a failed assertion. */
function refused(t: Assert, fn: () => unknown, what: string): AppError {
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof AppError, `${what}: AppError`);
    t.equal((err as AppError).slug, 'validation_error', `${what}: validation_error`);
    t.equal((err as AppError).status, 422, `${what}: 422`);
    return err as AppError;
  }
  t.fail(`${what}: was not refused`);
  return new AppError('internal', 'not refused');
}

t.test('variables, default, if on a literal, contact and custom fields', async (t) => {
  t.equal(render('Hi {{ contact.first_name | default: "there" }}'), 'Hi Ada');
  t.equal(render('Hi {{ contact.first_name | default: "there" }}', 'body_text', { contact: { email: 'x@example.test' } }), 'Hi there', 'null first name');
  t.equal(render('Hi {{ nickname | default: "friend" }}!'), 'Hi friend!', 'a missing variable takes the default');
  t.equal(render('[{{ nowhere.deep.down }}]'), '[]', 'missing variables render empty');
  t.equal(render('{% if custom_fields.plan == "pro" %}Pro{% else %}Free{% endif %}'), 'Pro');
  t.equal(render('{% if contact.custom_fields.country == "US" %}US{% elsif custom_fields.country == "IN" %}India{% endif %}'), 'India');
  t.equal(render('{{ contact.email }} / {{ custom_fields.plan }}'), 'ada@example.test / pro');
  t.equal(
    render('{{ order_id }}: {% for item in items %}{{ item.sku }} {% endfor %}', 'body_text', {
      variables: { order_id: 7, items: [{ sku: 'A' }, { sku: 'B' }] },
    }),
    '7: A B ',
  );
  t.equal(render('{{ contact.email | upcase }} {{ "x" | append: "y" }}'), 'ADA@EXAMPLE.TEST xy', 'standard filters');
  t.equal(renderTemplate('Hello {{ who }}', renderContext({ variables: { who: 'world' } }), 'body_text'), 'Hello world', 'source form');
  t.equal(render('{{ contact.email }}|{{ custom_fields.plan }}', 'body_text', {}), '|', 'no contact: empty');
});

t.test('contact and custom_fields are reserved; prototypes are out of reach', async (t) => {
  const out = render('{{ contact.email }} {{ custom_fields.plan }}', 'body_text', {
    variables: { contact: { email: 'forged' }, custom_fields: { plan: 'free' } },
    contact,
  });
  t.equal(out, 'ada@example.test pro', 'the contact wins over variables of the same name');
  t.equal(render('[{{ contact.constructor }}{{ custom_fields.__proto__ }}{{ contact.email.constructor }}]'), '[]');
});

t.test('body_html escapes output, subject and body_text do not; | raw opts out', async (t) => {
  const input = { variables: { name: '<b>Tom & "Jerry"\'s</b>' }, contact };
  t.equal(render('<p>{{ name }}</p>', 'body_html', input), '<p>&lt;b&gt;Tom &amp; &#34;Jerry&#34;&#39;s&lt;/b&gt;</p>', 'escaped in HTML, literal markup kept');
  t.equal(render('<p>{{ name | raw }}</p>', 'body_html', input), '<p><b>Tom & "Jerry"\'s</b></p>', 'raw is not escaped');
  t.equal(render('{% echo name %}', 'body_html', input), '&lt;b&gt;Tom &amp; &#34;Jerry&#34;&#39;s&lt;/b&gt;', 'echo is escaped too');
  t.equal(render('{{ name }}', 'body_text', input), '<b>Tom & "Jerry"\'s</b>');
  t.equal(render('{{ name }}', 'subject', input), '<b>Tom & "Jerry"\'s</b>');
  // One context renders all three parts: the HTML mark must not stick to it.
  const context = renderContext(input);
  const parts = (['body_html', 'subject', 'body_text'] as const).map((p) => renderTemplate(parseTemplate('{{ name }}', p), context));
  t.same(parts, ['&lt;b&gt;Tom &amp; &#34;Jerry&#34;&#39;s&lt;/b&gt;', input.variables.name, input.variables.name]);
});

t.test('a rendered subject stays on one line', async (t) => {
  const input = { variables: { s: 'Hello\r\nBcc: victim@example.test\n\nbody' } };
  const subject = render('Re: {{ s }}', 'subject', input);
  t.notMatch(subject, /[\r\n]/);
  t.equal(subject, 'Re: Hello Bcc: victim@example.test body');
  t.equal(render('  Line one\n{% if true %}\n  line two\n{% endif %}\n', 'subject', {}), 'Line one line two', 'line breaks of the source too');
  t.equal(render('a\r\nb', 'body_text', {}), 'a\r\nb', 'bodies keep their line breaks');
});

t.test('syntax errors name the part, line and column', async (t) => {
  let err = refused(t, () => parseTemplate('Hello\n  {% if x %}never closed', 'body_html'), 'unclosed if');
  t.equal(err.message, 'body_html: Liquid syntax error at line 2, column 3: tag {% if x %} not closed');
  err = refused(t, () => parseTemplate('Hi {{ name | shout }}', 'subject'), 'unknown filter');
  t.equal(err.message, 'subject: Liquid syntax error at line 1, column 4: undefined filter: shout');
  err = refused(t, () => parseTemplate('one\ntwo\n{% frobnicate %}', 'body_text'), 'unknown tag');
  t.match(err.message, /^body_text: Liquid syntax error at line 3, column 1: tag "frobnicate" not found/);
  err = refused(t, () => parseTemplate('{{ unterminated', 'body_text'), 'unterminated output');
  t.match(err.message, /^body_text: Liquid syntax error at line 1, column 1: /);
});

t.test('include, render and layout cannot read files', async (t) => {
  const attempts = [
    "{% include '/etc/passwd' %}",
    '{% include "../../../../etc/passwd" %}',
    '{% include file %}',
    "{% render '/etc/passwd' %}",
    "{% layout '/etc/passwd' %}",
    "{% layout '/etc/passwd' %}{% block x %}{% endblock %}",
    "{% liquid\n include '/etc/passwd'\n%}",
    "{% if true %}\n{% include '/etc/passwd' %}\n{% endif %}",
  ];
  for (const source of attempts) {
    const err = refused(t, () => parseTemplate(source, 'body_html'), source);
    t.match(
      err.message,
      /^body_html: Liquid syntax error at line \d+, column \d+: the (include|render|layout) tag is not supported/,
      `${source}: refused when parsed`,
    );
    t.notMatch(err.message, /root:/, 'no file content');
  }
});

t.test('render-time failures are 422 naming the part', async (t) => {
  const err = refused(t, () => render('ok\n{{ "a" | append }}', 'body_text'), 'filter misuse');
  t.match(err.message, /^body_text: could not render at line 2, column 1: append expect/);
});

t.test('a hostile loop stops at the memory limit instead of hanging', { timeout: 20_000 }, async (t) => {
  const err = refused(t, () => render('{% for i in (1..100000000) %}x{% endfor %}', 'body_html'), 'huge range');
  t.match(err.message, /^body_html: could not render at line 1, column 1: memory alloc limit exceeded/);
});

t.test('a long nested loop stops at the render time limit', { timeout: 20_000 }, async (t) => {
  // An array variable, not a range: ranges count against the memory limit, which would stop the loop first.
  const items = Array.from({ length: 20_000 }, (_, i) => i);
  const err = refused(
    t,
    () => render('{% for i in items %}{% for j in items %}x{% endfor %}{% endfor %}', 'body_text', { variables: { items } }),
    'nested loops',
  );
  t.match(err.message, /^body_text: could not render at line \d+, column \d+: template render limit exceeded/);
});

t.test('large output is refused before it is built', { timeout: 20_000 }, async (t) => {
  const big = 'x'.repeat(300_000);
  const err = refused(t, () => render('{% for i in (1..20) %}{{ big }}{% endfor %}', 'body_text', { variables: { big } }), 'output');
  t.equal(err.message, `body_text: renders to more than ${MAX_RENDERED_CHARS} characters`);
  t.equal(render('{% for i in (1..3) %}{{ big }}{% endfor %}', 'body_text', { variables: { big } }).length, 900_000, 'below the cap renders');
});

t.test('each part is at most 512 KiB of UTF-8', async (t) => {
  t.ok(parseTemplate('a'.repeat(MAX_PART_BYTES), 'body_html'), 'exactly the limit parses');
  let err = refused(t, () => parseTemplate('a'.repeat(MAX_PART_BYTES + 1), 'body_html'), 'one byte over');
  t.match(err.message, /^body_html: must be at most 512 KiB/);
  err = refused(t, () => parseTemplate('é'.repeat(MAX_PART_BYTES / 2 + 1), 'subject'), 'counted in bytes');
  t.match(err.message, /^subject: must be at most 512 KiB/);
});
