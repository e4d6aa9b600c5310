"""Block devices: disks, partitions and their queue/ attributes, and the devices stacked on them
([[loop]], [[md]], [[dm]]) with their slaves/ and holders/ links."""

from .sizes import SECTOR_BYTES, align_up, size_of

NVME_MAJOR = 259
LOOP_MAJOR = 7
MD_MAJOR = 9
FIRST_PARTITION_SECTOR = 2048       # 1 MiB-aligned partitions, like fdisk/parted
GPT_BACKUP_SECTORS = 34             # the backup GPT at the end of the disk


class BlockDevices:
    """Writes block devices into the tree; block minors and diskseq numbers are handed out in the
    order the devices are written."""

    def __init__(self, tree, kernel):
        self.tree = tree
        self.kernel = kernel
        self.minor = 0
        self.diskseq = 0
        self.paths = {}          # name -> sysfs path, for slaves/ and holders/ links

    def next_minor(self):
        minor = self.minor
        self.minor += 1
        return minor

    def write_queue(self, path, block_size, extra=None):
        queue = {"logical_block_size": block_size, "physical_block_size": block_size,
                 "hw_sector_size": block_size, "minimum_io_size": block_size,
                 "optimal_io_size": 0, "rotational": 0, "max_sectors_kb": 1280,
                 "max_hw_sectors_kb": 2048, "nr_requests": 1023,
                 "scheduler": "[none] mq-deadline", "write_cache": "write back",
                 "dma_alignment": 3, "nomerges": 0, "read_ahead_kb": 128}
        if extra:
            queue.update(extra)
        for key, value in queue.items():
            self.tree.write(path + "/queue/" + key, "%s\n" % value)

    def write_disk(self, path, name, sectors, block_size, major, minor, extra_files=None,
                   hidden=False, queue_extra=None):
        """hidden: a multipath path device (nvmeXcYnZ), which has no dev_t and no /sys/dev link."""
        tree = self.tree
        tree.write(path + "/size", "%d\n" % sectors)
        tree.write(path + "/ro", "0\n")
        tree.write(path + "/removable", "0\n")
        tree.write(path + "/alignment_offset", "0\n")
        tree.write(path + "/discard_alignment", "0\n")
        tree.write(path + "/ext_range", "%d\n" % (256 if major == NVME_MAJOR else 1))
        if not hidden:
            self.diskseq += 1
            tree.write(path + "/dev", "%d:%d\n" % (major, minor))
            uevent = "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nDEVTYPE=disk\n" % (major, minor, name)
            if self.kernel.version >= (5, 15):
                uevent += "DISKSEQ=%d\n" % self.diskseq
            tree.write(path + "/uevent", uevent)
            tree.link("sys/dev/block/%d:%d" % (major, minor), path)
        else:
            tree.write(path + "/uevent", "DEVTYPE=disk\n")
        tree.link(path + "/subsystem", "/sys/class/block")
        tree.link("sys/block/" + name, path)
        tree.link("sys/class/block/" + name, path)
        self.write_queue(path, block_size, queue_extra)
        for key, value in (extra_files or {}).items():
            tree.write(path + "/" + key, value)
        self.paths[name] = path

    def write_partitions(self, disk_path, disk_name, total_sectors, sizes, major):
        """sizes: "512M", ... or "*" for the rest of the disk (whole MiB, before the backup GPT)."""
        tree = self.tree
        start = FIRST_PARTITION_SECTOR
        last_usable = total_sectors - GPT_BACKUP_SECTORS
        for number, size_text in enumerate(sizes, 1):
            if size_text == "*":
                size = last_usable - start + 1
                size -= size % 2048
            else:
                size = size_of(size_text) // SECTOR_BYTES
            separator = "p" if disk_name[-1].isdigit() else ""
            name = "%s%s%d" % (disk_name, separator, number)
            path = disk_path + "/" + name
            minor = self.next_minor()
            tree.write(path + "/partition", "%d\n" % number)
            tree.write(path + "/start", "%d\n" % start)
            tree.write(path + "/size", "%d\n" % size)
            tree.write(path + "/ro", "0\n")
            tree.write(path + "/alignment_offset", "0\n")
            tree.write(path + "/discard_alignment", "0\n")
            tree.write(path + "/dev", "%d:%d\n" % (major, minor))
            tree.write(path + "/uevent",
                       "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nDEVTYPE=partition\nPARTN=%d\n"
                       % (major, minor, name, number))
            tree.link(path + "/subsystem", "/sys/class/block")
            tree.link("sys/class/block/" + name, path)
            tree.link("sys/dev/block/%d:%d" % (major, minor), path)
            self.paths[name] = path
            start = align_up(start + size, 2048)

    def write_stacked(self, desc):
        """[[loop]], [[md]], [[dm]] in that order; slaves must be written already."""
        for kind, major in (("loop", LOOP_MAJOR), ("md", MD_MAJOR), ("dm", self.kernel.dm_major)):
            for entry in desc.get(kind, []):
                self.write_stacked_device(kind, major, entry)

    def write_stacked_device(self, kind, major, entry):
        tree = self.tree
        name = entry["name"]
        minor = int("".join(ch for ch in name if ch.isdigit()))
        path = "/sys/devices/virtual/block/" + name
        sectors = size_of(entry["size"]) // SECTOR_BYTES
        extra = {}
        if kind == "dm":
            extra = {"dm/name": entry["dm_name"] + "\n", "dm/uuid": entry.get("uuid", "") + "\n",
                     "dm/suspended": "0\n", "dm/use_blk_mq": "1\n"}
        elif kind == "md":
            extra = {"md/level": entry["level"] + "\n",
                     "md/raid_disks": "%d\n" % len(entry.get("slaves", [])),
                     "md/array_state": entry.get("array_state", "clean") + "\n",
                     "md/metadata_version": entry.get("metadata", "1.2") + "\n",
                     "md/chunk_size": "%d\n" % size_of(entry.get("chunk", "512K"))}
        elif kind == "loop":
            extra = {"loop/backing_file": entry["backing_file"] + "\n",
                     "loop/offset": "0\n", "loop/sizelimit": "0\n",
                     "loop/autoclear": "%d\n" % entry.get("autoclear", 1),
                     "loop/partscan": "0\n", "loop/dio": "%d\n" % entry.get("dio", 0)}
        self.write_disk(path, name, sectors, entry.get("lbs", 512), major, minor, extra,
                        queue_extra={"rotational": entry.get("rotational", 0)})
        for slot, slave in enumerate(entry.get("slaves", [])):
            if slave not in self.paths:
                raise SystemExit("mkfixture: %s: unknown slave %s" % (name, slave))
            tree.link(path + "/slaves/" + slave, self.paths[slave])
            tree.link(self.paths[slave] + "/holders/" + name, path)
            if kind == "md":
                tree.link(path + "/md/dev-%s/block" % slave, self.paths[slave])
                tree.write(path + "/md/dev-%s/state" % slave, "in_sync\n")
                tree.write(path + "/md/dev-%s/slot" % slave, "%d\n" % slot)
