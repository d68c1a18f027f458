// The X-Quota-* headers of the send routes.
import t from 'tap';
import { quotaHeaders } from '../../api/quota-headers.js';

t.test('quota headers', async (t) => {
  t.same(quotaHeaders({ used: 10, cap: 100 }), { 'X-Quota-Used': '10', 'X-Quota-Cap': '100', 'X-Quota-Remaining': '90' });
  t.equal(quotaHeaders({ used: 79, cap: 100 })['X-Quota-Warning'], undefined);
  t.equal(quotaHeaders({ used: 80, cap: 100 })['X-Quota-Warning'], '1', 'warning from 80 %');
  t.same(quotaHeaders({ used: 120, cap: 100 })['X-Quota-Remaining'], '0', 'never negative');
});
