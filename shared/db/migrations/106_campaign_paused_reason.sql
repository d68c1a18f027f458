-- Why the fan-out paused a campaign, in words the tenant reads (GET /campaigns/{id} paused_reason): its renders
-- exceeded the render budget (waiting_reason render_budget). Cleared when the campaign is resumed or paused by a caller.
alter table campaigns add column paused_reason text;
