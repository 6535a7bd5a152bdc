import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { ROLES } from '../../../../shared/contracts/organizations.js';
import type { listMembers } from '../../../services/members.js';
import { Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge, PostForm, Time } from '../../render.js';

type Member = Awaited<ReturnType<typeof listMembers>>['data'][number];

/** The members, with role changes and removal for a manager, and "Leave" for anyone else. */
export const MembersCard: FC<{ c: Context<DashEnv>; members: Member[]; me?: string; manager: boolean }> = ({
  c,
  members,
  me,
  manager,
}) => {
  // Anyone may leave (the API's rule); owners and admins do it from their own row.
  const own = members.find((m) => m.user.id === me);
  return (
    <section class="card" aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      <Table cols={['Person', 'Role', 'Joined', manager && 'Change']}>
        {members.map((m) => (
          <MemberRow c={c} m={m} self={m.user.id === me} manager={manager} />
        ))}
      </Table>
      {!manager ? <p class="muted">Only an owner or admin can change roles, remove members or invite people.</p> : null}
      {!manager && own ? (
        <PostForm
          c={c}
          action={`/app/team/members/${encodeURIComponent(own.id)}/remove`}
          confirm="Leave this organization? You lose access to its forms and submissions."
        >
          <button type="submit" class="secondary">
            Leave this organization
          </button>
        </PostForm>
      ) : null}
    </section>
  );
};

const MemberRow: FC<{ c: Context<DashEnv>; m: Member; self: boolean; manager: boolean }> = ({
  c,
  m,
  self,
  manager,
}) => (
  <tr>
    <td>
      {m.user.name ? <span>{m.user.name} </span> : null}
      <span class="muted">{m.user.email}</span>
      {self ? <span> (you)</span> : null}
    </td>
    <td>
      <Badge value={m.role} /> <span>{m.role}</span>
    </td>
    <td>
      <Time at={m.joined_at} />
    </td>
    {manager ? (
      <td>
        <div class="row">
          <PostForm c={c} action={`/app/team/members/${encodeURIComponent(m.id)}/role`} class="row">
            <select name="role" aria-label={`Role of ${m.user.email}`}>
              {ROLES.map((r) => (
                <option value={r} selected={r === m.role}>
                  {r}
                </option>
              ))}
            </select>
            <button type="submit" class="secondary">
              Change role
            </button>
          </PostForm>
          <PostForm
            c={c}
            action={`/app/team/members/${encodeURIComponent(m.id)}/remove`}
            confirm={
              self ? 'Leave this organization?' : `Remove ${m.user.email} from this organization? Their API keys stay.`
            }
          >
            <button type="submit" class="danger">
              {self ? 'Leave' : 'Remove'}
            </button>
          </PostForm>
        </div>
      </td>
    ) : null}
  </tr>
);
