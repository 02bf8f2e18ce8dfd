"""Distributed helpers for multi-GPU tests (NCCL).

torch.distributed is imported inside each function so that importing this module never
touches the distributed or CUDA runtimes.
"""
import os

import torch

__all__ = ['init_dist', 'uneven_all_gather', 'dist_print']

# Filled by init_dist; dist_print needs the local rank to print once per node.
_local_rank = None


def init_dist(local_rank: int, num_local_ranks: int):
    """Join the NCCL world of WORLD_SIZE nodes x num_local_ranks GPUs; returns (rank, world_size, group)."""
    import torch.distributed as dist
    global _local_rank

    ip = os.getenv('MASTER_ADDR', '127.0.0.1')
    port = int(os.getenv('MASTER_PORT', '8361'))
    num_nodes = int(os.getenv('WORLD_SIZE', '1'))
    node_rank = int(os.getenv('RANK', '0'))

    dist.init_process_group(backend='nccl', init_method=f'tcp://{ip}:{port}',
                            world_size=num_nodes * num_local_ranks,
                            rank=node_rank * num_local_ranks + local_rank)
    torch.set_default_device('cuda')
    torch.cuda.set_device(local_rank)
    _local_rank = local_rank
    world_size = dist.get_world_size()
    return dist.get_rank(), world_size, dist.new_group(list(range(world_size)))


def uneven_all_gather(tensor: torch.Tensor, dim: int = 0, group=None) -> torch.Tensor:
    """All-gather tensors whose sizes differ along `dim`: pad to the max, gather, trim, concatenate."""
    import torch.distributed as dist

    world_size = dist.get_world_size(group)
    size = torch.tensor([tensor.size(dim)], dtype=torch.int64, device=tensor.device)
    sizes = [torch.empty_like(size) for _ in range(world_size)]
    dist.all_gather(sizes, size, group=group)
    sizes = [int(s.item()) for s in sizes]

    padded_shape = list(tensor.shape)
    padded_shape[dim] = max(sizes)
    padded = tensor.new_zeros(padded_shape)
    padded.narrow(dim, 0, tensor.size(dim)).copy_(tensor)
    gathered = [torch.empty_like(padded) for _ in range(world_size)]
    dist.all_gather(gathered, padded.contiguous(), group=group)
    return torch.cat([t.narrow(dim, 0, s) for t, s in zip(gathered, sizes)], dim=dim)


def dist_print(s: str = '', once_in_node: bool = False):
    """Print (only on local rank 0 when once_in_node), then barrier. Requires a prior init_dist."""
    import torch.distributed as dist

    assert _local_rank is not None, 'dist_print requires init_dist to be called first'
    if not once_in_node or _local_rank == 0:
        print(s, flush=True)
    dist.barrier()
