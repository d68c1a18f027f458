// How the API answers a send the gates refused (the submission server maps the same refusals to SMTP: test/mta/submission/message.test.ts).
import t from 'tap';
import { refusalError } from '../../api/send-refusals.js';

t.test('a refusal as an HTTP answer: suspended 403 forbidden, the cap 402 quota_exceeded with its figures in the quota headers', async (t) => {
  const suspended = refusalError({ reason: 'tenant_suspended' });
  t.match(suspended, { slug: 'forbidden', status: 403, message: /suspended/ });
  const capped = refusalError({ reason: 'quota_exceeded', used: 3000, cap: 3000 });
  t.match(capped, { slug: 'quota_exceeded', status: 402, message: /3000/ });
  t.same(capped.headers, { 'X-Quota-Used': '3000', 'X-Quota-Cap': '3000', 'X-Quota-Remaining': '0', 'X-Quota-Warning': '1' });
});
