import torch

def f(x):
    y = g(x)
    return y
