-- An API key carries the role of the user who made it as a ceiling: role-gated routes (the owner-only audit
-- exports) check it for keys too, so a developer cannot reach them by minting a key.
--
-- Existing keys: the creator's current role, and at least developer (the least role that can make a key, so no
-- key loses the writes it has). A key whose creator was removed gets developer: nothing says more was meant.
alter table api_keys add column role_ceiling text not null default 'developer'
  check (role_ceiling in ('owner', 'admin', 'developer', 'viewer'));

update api_keys k set role_ceiling = case when u.role = 'viewer' then 'developer' else u.role end
from users u where u.id = k.created_by_user_id;
