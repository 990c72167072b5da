// Charges that failed get another go on a schedule.

export const SCHEDULE_DAYS = [1, 3, 7];

export class Dunner {
  constructor(private mailer: Mailer, private gateway: Gateway) {}

  async attempt(invoice: Invoice, round: number): Promise<boolean> {
    await this.mailer.notify(invoice.customer, round);
    const ok = await this.gateway.charge(invoice);
    if (!ok && round === SCHEDULE_DAYS.length) {
      await pausePlan(invoice.plan);
    }
    return ok;
  }
}

export async function pausePlan(plan: Plan): Promise<void> {
  plan.state = "paused";
  await plan.save();
}
