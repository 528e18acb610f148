import { Link } from './ui.tsx';
import '../styles/project-tabs.css';

export type ProjectTab = 'logs' | 'alerts' | 'settings';

const TABS: Array<{ id: ProjectTab; label: string }> = [
  { id: 'logs', label: 'Logs' },
  { id: 'alerts', label: 'Alerts' },
  { id: 'settings', label: 'Settings' },
];

/** The project's sections as tabs under its name: every project page shows them, the current one marked. */
export function ProjectTabs({ projectId, current }: { projectId: string; current: ProjectTab }) {
  const base = `/projects/${encodeURIComponent(projectId)}`;
  return (
    <nav className="project-tabs" aria-label="Project sections">
      {TABS.map((tab) => (
        <Link key={tab.id} to={`${base}/${tab.id}`} className="project-tab" aria-current={tab.id === current ? 'page' : undefined}>
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}
