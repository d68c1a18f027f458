// A render thread of the pool (main/render-pool.ts): runs one render job at a time, reporting where it is in a shared buffer so that a job stopped at its
// deadline names the part it was stuck in.
import { isMainThread, threadId } from 'node:worker_threads';
import { runRenderJob } from '../shared/sending/templates/render-job.js';
import type { RenderJob, RenderReport } from '../shared/sending/templates/renderer.js';

export interface RenderTask {
  job: RenderJob;
  /** Three Int32 slots: the item and source being rendered (shared/sending/templates/render-job.ts JobProgress), and whether the job began. */
  progress: SharedArrayBuffer;
}

/** What a thread answers: the report, and where it ran (never on the main thread: the tests check it). */
export type RenderAnswer = RenderReport & { onMainThread: boolean; threadId: number };

export default function renderTask(task: RenderTask): RenderAnswer {
  const progress = new Int32Array(task.progress);
  // The deadline counts from here (main/render-pool.ts), not from when the pool began starting a thread.
  Atomics.store(progress, 2, 1);
  return { ...runRenderJob(task.job, progress), onMainThread: isMainThread, threadId };
}
