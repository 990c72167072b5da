using System.Linq;

namespace Platform.Data
{
    public class PartitionGuard
    {
        private readonly string orgId;

        public PartitionGuard(string orgId) { this.orgId = orgId; }

        public IQueryable<T> Scope<T>(IQueryable<T> rows) where T : IOwned
        {
            return rows.Where(r => r.OrgId == orgId);
        }
    }
}
