// A renderer that runs render jobs on the calling thread, for tests of what is made of the renders (the processes always render on their pool's threads,
// main/render-pool.ts).
import { composeCampaignContent, RenderOverBudget, type CampaignMessage, type CampaignMessageInput } from '../../shared/campaigns/content.js';
import { AppError } from '../../shared/kernel/errors.js';
import { runRenderJob } from '../../shared/sending/templates/render-job.js';
import type { TemplateRenderer } from '../../shared/sending/templates/renderer.js';

export const inlineRenderer: TemplateRenderer = {
  render: async (job) => runRenderJob(job),
  close: async () => {},
};

/** One campaign message rendered on this thread; a recipient's fault is thrown as its 422, a render over budget as an Error. */
export async function composeMessage(input: CampaignMessageInput, budgetMs = 5000): Promise<CampaignMessage> {
  const outcome = await composeCampaignContent({ renderer: inlineRenderer, budgetMs, itemsPerJob: 50 }, input);
  if (outcome instanceof AppError) throw outcome;
  if (outcome instanceof RenderOverBudget) throw new Error(outcome.reason);
  return outcome;
}
