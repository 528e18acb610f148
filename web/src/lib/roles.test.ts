import { describe, expect, it } from 'vitest';
import { describeAgent } from './agent.ts';
import { atLeast, needsRole } from './roles.ts';

describe('roles in the console', () => {
  it('orders the roles member < admin < owner', () => {
    expect(atLeast('owner', 'admin')).toBe(true);
    expect(atLeast('admin', 'admin')).toBe(true);
    expect(atLeast('member', 'admin')).toBe(false);
    expect(atLeast('admin', 'owner')).toBe(false);
    expect(atLeast(undefined, 'member')).toBe(false);
  });

  it("says which role a control needs, and the caller's, only when the caller lacks it", () => {
    expect(needsRole('admin', 'admin', 'Rotating the key')).toBeUndefined();
    expect(needsRole('member', 'admin', 'Rotating the key')).toBe('Rotating the key needs the admin role or higher (you are a member).');
    expect(needsRole('admin', 'owner', 'Deleting the project')).toBe('Deleting the project needs the owner role (you are an admin).');
    expect(needsRole('member', 'owner')).toBe('Needs the owner role (you are a member).');
  });
});

describe('sessions in the console', () => {
  it('names a client by browser and system', () => {
    expect(describeAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(describeAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15')).toBe('Safari on macOS');
    expect(describeAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Windows');
    expect(describeAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0')).toBe('Edge on Windows');
    expect(describeAgent('curl/8.5.0')).toBe('curl');
    expect(describeAgent('node')).toBe('Node.js');
    expect(describeAgent('loglane-cli/1.0')).toBe('loglane-cli');
    expect(describeAgent(null)).toBe('Unknown client');
  });
});
