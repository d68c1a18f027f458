// A path the app has no page for, or a thing the API says is not there (another tenant's id reads the same).
import { useTitle } from '../ui/layout';

/** The words of "not found", for a page of its own or inside the shell (a message page whose id the API answers 404). */
export function NotFoundMessage() {
  useTitle('Not found');
  return (
    <div class="card">
      <h1>Not found</h1>
      <p>There is nothing here, or it belongs to another workspace.</p>
      <p>
        <a href="/app/">Back to the overview</a>
      </p>
    </div>
  );
}

export default function NotFound() {
  return (
    <main class="auth" id="main">
      <NotFoundMessage />
    </main>
  );
}
