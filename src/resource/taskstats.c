/*
 * taskstats.c - ask the kernel's taskstats generic-netlink family for one
 * task's delay-accounting totals in nanoseconds (block I/O wait and
 * run-queue wait).  /proc/PID/stat field 42 has the same block I/O number
 * but only in clock ticks (10 ms here), which rounds short waits to 0.
 *
 * Design notes: one request/response on a fresh NETLINK_GENERIC socket per
 * call (the family id is resolved once and cached).  The kernel refuses
 * TASKSTATS_CMD_GET without CAP_NET_ADMIN and fails for reaped tasks, so the
 * caller must query the zombie before wait4() and keep the /proc fallback.
 * struct taskstats only ever grows at the end (TASKSTATS_VERSION), so
 * copying min(kernel size, our size) into a zeroed struct is safe both ways.
 */
#include "prof/resource.h"
#include "prof/util.h"
#include "resource-priv.h"
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NLA_DATA(na) ((char *)(na) + NLA_HDRLEN)
#define GENL_DATA(nlh) ((char *)NLMSG_DATA(nlh) + GENL_HDRLEN)

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

static void add_attr(struct nl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *na = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	na->nla_type = type;
	na->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(NLA_DATA(na), data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(na->nla_len);
}

/* Send r, receive one reply into buf; returns its length or -errno. */
static int transact(int fd, struct nl_req *r, char *buf, size_t size)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t n;

	if (sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	n = recv(fd, buf, size, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)n))
		return -EIO;
	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);

		return e->error ? e->error : -EIO;
	}
	return (int)n;
}

static void init_req(struct nl_req *r, uint16_t type, uint8_t cmd)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST;
	r->g.cmd = cmd;
	r->g.version = 1;
}

/* Walk attributes in [p, end); returns the first of type, or NULL. */
static struct nlattr *find_attr(char *p, char *end, uint16_t type)
{
	while (p + NLA_HDRLEN <= end) {
		struct nlattr *na = (struct nlattr *)p;

		if (na->nla_len < NLA_HDRLEN || p + na->nla_len > end)
			return NULL;
		if ((na->nla_type & NLA_TYPE_MASK) == type)
			return na;
		p += NLA_ALIGN(na->nla_len);
	}
	return NULL;
}

static int family_id(int fd)
{
	static int cached;
	struct nl_req r;
	char buf[4096];
	int n;

	if (cached)
		return cached;
	init_req(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	add_attr(&r, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	n = transact(fd, &r, buf, sizeof(buf));
	if (n < 0)
		return n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlattr *id = find_attr(GENL_DATA(h), buf + h->nlmsg_len, CTRL_ATTR_FAMILY_ID);
	if (!id)
		return -ENOENT;
	memcpy(&r.n.nlmsg_type, NLA_DATA(id), sizeof(uint16_t));
	cached = r.n.nlmsg_type;
	return cached;
}

int res_taskstats_delays(pid_t pid, uint64_t *blkio_ns, uint64_t *cpu_wait_ns)
{
	struct timeval tv = { .tv_sec = 1 };	/* never hang a measurement */
	struct taskstats ts;
	struct nl_req r;
	char buf[8192];
	uint32_t p = (uint32_t)pid;
	int fd, fam, n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	fam = family_id(fd);
	if (fam < 0) {
		close(fd);
		return fam;
	}
	init_req(&r, (uint16_t)fam, TASKSTATS_CMD_GET);
	add_attr(&r, TASKSTATS_CMD_ATTR_PID, &p, sizeof(p));
	n = transact(fd, &r, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlattr *aggr = find_attr(GENL_DATA(h), buf + h->nlmsg_len, TASKSTATS_TYPE_AGGR_PID);
	if (!aggr)
		return -EIO;
	struct nlattr *st = find_attr(NLA_DATA(aggr), (char *)aggr + aggr->nla_len, TASKSTATS_TYPE_STATS);
	if (!st)
		return -EIO;
	memset(&ts, 0, sizeof(ts));
	memcpy(&ts, NLA_DATA(st), MIN(sizeof(ts), (size_t)(st->nla_len - NLA_HDRLEN)));
	*blkio_ns = ts.blkio_delay_total;
	*cpu_wait_ns = ts.cpu_delay_total;
	return 0;
}
